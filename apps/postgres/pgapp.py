# SPDX-License-Identifier: MIT
"""postgres - SQL queries against the PostgreSQL server the connection
string (the secret POSTGRES_URL) names, through berth's egress broker: the
only destination the sandbox can reach is the host:port berth.yml declares.

Read-only unless the app directory's config.json says {"allow_writes": true}:
the session's default_transaction_read_only is on, and every call runs in a
READ ONLY transaction whose snapshot is taken before the statement (so the
statement cannot switch it to read-write), rolled back at the end.  One
statement per call: a string with a second statement (after a `;` outside
quotes, dollar quotes and comments) is refused before it is sent.
"""

import datetime
import decimal
import json
import os
import re
import uuid

import berth_app
import psycopg2
import psycopg2.extensions

SECRET = "POSTGRES_URL"
CONFIG = "/app/config.json"
MAX_ROWS = 10000

app = berth_app.App()

# libpq reads these files and variables too: none of them may add a host,
# a password or a program.
for k in list(os.environ):
    if k.startswith("PG"):
        del os.environ[k]
os.environ["PGPASSFILE"] = "/dev/null"
os.environ["PGSERVICEFILE"] = "/dev/null"
os.environ["PGSYSCONFDIR"] = "/nonexistent"

# The connection string's keys this app passes on (libpq's "Parameter Key
# Words"); anything else (hostaddr, passfile, service, sslkey, ...) is refused.
ALLOWED_KEYS = {"host", "port", "dbname", "user", "password", "sslmode", "application_name",
                "connect_timeout", "sslrootcert", "target_session_attrs"}


def _load_config():
    try:
        with open(CONFIG, encoding="utf-8") as f:
            c = json.load(f)
    except FileNotFoundError:
        return {}
    if not isinstance(c, dict) or not all(k in ("allow_writes",) for k in c) or \
            not isinstance(c.get("allow_writes", False), bool):
        raise SystemExit("postgres: %s: expected {\"allow_writes\": true|false}" % CONFIG)
    return c


ALLOW_WRITES = _load_config().get("allow_writes", False)
_dsn = os.environ.pop(SECRET, None)  # out of the environment: no child ever sees it
_password = None
_conn = None


def _scrub(text):
    text = str(text).strip()
    if _password:
        text = text.replace(_password, "[secret]")
    if _dsn:
        text = text.replace(_dsn, "[secret]")
    return text


def _params():
    global _password
    if not _dsn:
        raise berth_app.AppError("no connection string: set %s in berth's environment" % SECRET)
    try:
        p = psycopg2.extensions.parse_dsn(_dsn)
    except psycopg2.Error:
        raise berth_app.AppError("%s is not a valid connection string (its text is not shown)" % SECRET)
    bad = sorted(set(p) - ALLOWED_KEYS)
    if bad:
        raise berth_app.AppError("%s sets `%s`, which this app does not pass on; allowed: %s"
                                 % (SECRET, bad[0], ", ".join(sorted(ALLOWED_KEYS))))
    if "," in p.get("host", "") or "," in p.get("port", ""):
        raise berth_app.AppError("%s names several hosts; give the one berth.yml declares" % SECRET)
    if not p.get("host") or p["host"].startswith("/"):
        raise berth_app.AppError("%s must name a TCP host (the one berth.yml declares), not a unix socket" % SECRET)
    _password = p.get("password")
    return p


def _connect():
    global _conn
    if _conn is not None and not _conn.closed:
        return _conn
    p = _params()
    # standard_conforming_strings on: the lexer of _one_statement reads
    # '...' without backslash escapes, as the server then does (a SET to off
    # in a read-only call is rolled back with it)
    opts = "-c statement_timeout=60000 -c standard_conforming_strings=on"
    if not ALLOW_WRITES:
        opts += " -c default_transaction_read_only=on"
    try:
        _conn = psycopg2.connect(options=opts, connect_timeout=p.pop("connect_timeout", 10), **p)
    except psycopg2.Error as e:
        host, port = p.get("host"), int(p.get("port", 5432))
        data, code = {"host": host, "port": port}, -32000
        if "Permission denied" in str(e):  # the sandbox's connect(2) refused: not declared
            data.update(errno=13, errno_name="EACCES", syscall="connect")
            code = -32001
        raise berth_app.AppError("cannot connect to %s:%s: %s" % (host, port, _scrub(e)), data, code=code)
    _conn.autocommit = True  # the transactions are the app's own BEGIN ... ROLLBACK/COMMIT
    return _conn


def _one_statement(sql):
    """sql without a second statement; ';' counts only outside quotes,
    dollar quotes and comments (PostgreSQL's lexical rules, 4.1)."""
    i, n, end = 0, len(sql), None
    while i < n:
        c = sql[i]
        if c in "'\"":
            escapes = c == "'" and i > 0 and sql[i - 1] in "eE" and (i < 2 or not (sql[i - 2].isalnum() or sql[i - 2] == "_"))
            i += 1
            while i < n:
                if escapes and sql[i] == "\\":
                    i += 2
                    continue
                if sql[i] == c:
                    if i + 1 < n and sql[i + 1] == c:
                        i += 2
                        continue
                    break
                i += 1
            i += 1
        elif c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif c == "/" and sql.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "$" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            m = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", sql[i:])
            if m:
                tag = m.group(0)
                j = sql.find(tag, i + len(tag))
                i = n if j < 0 else j + len(tag)
            else:
                i += 1
        elif c == ";":
            if end is None:
                end = i
            i += 1
        else:
            if end is not None and not c.isspace():
                raise berth_app.InvalidParams("$.sql", "one statement per call (a second one follows the `;`)")
            i += 1
    return sql if end is None else sql[:end]


def _json(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.date, datetime.time, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return str(v)
    if isinstance(v, (bytes, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_json(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json(x) for k, x in v.items()}
    return str(v)


def _run(sql, params, max_rows):
    conn = _connect()
    try:
        with conn.cursor() as cur:
            if params is not None:
                # psycopg2 puts each quoted value in place of its %s on this
                # side: a %s inside quotes ('%s') would end them and what the
                # value holds would be statements.  The text sent is checked.
                sql = _one_statement(cur.mogrify(sql, params).decode(_pyenc(conn.encoding)))
                params = None
            if ALLOW_WRITES:
                cur.execute("BEGIN READ WRITE")
            else:
                # READ ONLY, and a snapshot taken at once: after the first
                # query a transaction cannot be made read-write (SET
                # TRANSACTION READ WRITE: "must be set before any query")
                cur.execute("BEGIN READ ONLY")
                cur.execute("SELECT 1")
            cur.execute(sql, params)
            out = {"command": cur.statusmessage or "", "row_count": cur.rowcount}
            if cur.description is not None:
                rows = cur.fetchmany(max_rows + 1)
                out["columns"] = [d.name for d in cur.description]
                out["rows"] = [[_json(v) for v in r] for r in rows[:max_rows]]
                out["truncated"] = len(rows) > max_rows
            cur.execute("COMMIT" if ALLOW_WRITES else "ROLLBACK")
            return out
    except psycopg2.Error as e:
        try:  # end the app's own transaction (autocommit: conn.rollback() would not)
            with conn.cursor() as c2:
                c2.execute("ROLLBACK")
        except psycopg2.Error:
            pass
        if conn.closed:
            globals()["_conn"] = None
        data = {"sqlstate": e.pgcode} if e.pgcode else None
        msg = e.pgerror or str(e)
        raise berth_app.AppError("postgres: %s" % _scrub(msg), data)


def _pyenc(pgenc):
    return psycopg2.extensions.encodings.get(pgenc, "utf-8")


def _sql(sql):
    if not isinstance(sql, str) or not sql.strip():
        raise berth_app.InvalidParams("$.sql", "a statement, not empty")
    return _one_statement(sql)


@app.export("query")
def query(sql, params=None, max_rows=1000):
    sql = _sql(sql)
    if params is not None and not isinstance(params, list):
        raise berth_app.InvalidParams("$.params", "a list of values for %s placeholders")
    if not isinstance(max_rows, int) or not 1 <= max_rows <= MAX_ROWS:
        raise berth_app.InvalidParams("$.max_rows", "expected 1 to %d" % MAX_ROWS)
    return _run(sql, params if params else None, max_rows)


@app.export("list_tables")
def list_tables(schema=None):
    out = _run("SELECT table_schema, table_name, table_type FROM information_schema.tables "
               "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
               "AND (%s::text IS NULL OR table_schema = %s) ORDER BY 1, 2", [schema, schema], MAX_ROWS)
    return {"tables": [{"schema": s, "name": n, "type": t} for s, n, t in out["rows"]]}


@app.export("describe_table")
def describe_table(table, schema="public"):
    out = _run("SELECT column_name, data_type, is_nullable = 'YES', column_default "
               "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
               "ORDER BY ordinal_position", [schema, table], MAX_ROWS)
    if not out["rows"]:
        raise berth_app.AppError("no table `%s.%s`" % (schema, table))
    keys = ("name", "type", "nullable", "default")
    return {"columns": [{k: v for k, v in zip(keys, r) if v is not None} for r in out["rows"]]}


@app.export("info")
def info():
    """What this app would do: never the connection string itself."""
    p = _params()
    return {"host": p.get("host"), "port": int(p.get("port", 5432)), "dbname": p.get("dbname", p.get("user", "")),
            "user": p.get("user", ""), "read_only": not ALLOW_WRITES}


app.run()
