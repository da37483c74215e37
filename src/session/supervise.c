/* SPDX-License-Identifier: MIT */
/*
 * supervise.c - the per-session supervisor: a detached berth process that
 * starts the agent's sandbox with a pty whose master it holds, renders the
 * output with libvterm, appends it to the log and serves the control socket.
 *
 * Control protocol (docs/sessions.md): one JSON object per line, one answer
 * per request.  {"op":"info"}, {"op":"peek"},
 * {"op":"send","data":TEXT[,"paste":true][,"enter":true]} (Enter is typed
 * as a keystroke of its own, after a pause: see ENTER_PAUSE_MS),
 * {"op":"resize","rows":R,"cols":C}, {"op":"stop","grace_ms":MS} (the answer
 * comes at once; the connection then stays open until the session ended),
 * {"op":"attach","rows":R,"cols":C}: after the answer line the connection is
 * raw: the screen is redrawn, output follows as the agent writes it and
 * every byte the client sends is typed into the pty.
 */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../supervisor/outq.h"
#include "../supervisor/review.h"
#include "../supervisor/run.h"
#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/sys.h"
#include "agent_state.h"
#include "control.h"
#include "screen.h"
#include "../util/termfilter.h"

#define MAX_CLIENTS 64
#define CLIENT_IN_MAX (64 * 1024)        /* bytes of one request line */
#define CLIENT_OUT_MAX (4 * 1024 * 1024) /* bytes queued for a client before it is dropped */
#define MASTER_OUT_MAX (1024 * 1024)     /* bytes queued for the agent's input */
#define DEFAULT_GRACE_MS BERTH_CONTROL_GRACE_DEFAULT_MS
/* The pause between typed text and the Enter after it.  An agent that sees
 * text and a CR arrive together takes them for a paste and the CR for a new
 * line in its input box: Codex's paste-burst detection (codex-rs/tui
 * paste_burst.rs: characters less than 8 ms apart are a paste, an Enter
 * within 120 ms after one is a newline).  The pause counts from the moment
 * the text was written to the pty in full. */
#define ENTER_PAUSE_MS 250
/* ... and, on a loaded machine, the agent may read the text only later,
 * together with the Enter: so the Enter also waits until the agent showed
 * it took the text (its screen changed after the text was written, then
 * stayed still for ENTER_QUIET_MS), for at most ENTER_WAIT_MAX_MS. */
#define ENTER_QUIET_MS 150
#define ENTER_WAIT_MAX_MS 10000
/* --review: a checkpoint is taken when the screen has been still this long
 * after a change and the agent-state classifier says idle or done (the
 * agent finished a turn); while it says working or blocked, it asks again
 * CHECKPOINT_RETRY_MS later. */
#define CHECKPOINT_QUIET_MS 2000
#define CHECKPOINT_RETRY_MS 1000

/* What is to be typed into the agent, in order (`send`, --prompt). */
enum typed_kind {
	TYPED_RAW,   /* as given: keys, escape sequences */
	TYPED_TEXT,  /* text: a bracketed paste when it has line breaks and the agent asked for it */
	TYPED_ENTER, /* a CR, ENTER_PAUSE_MS after everything before it reached the pty */
};

struct typed {
	enum typed_kind kind;
	size_t len;
	struct typed *next;
	char data[];
};

struct client {
	int fd;
	bool attached;
	bool waiting_end; /* a stop request: answered, kept open until the end */
	bool dead;
	char in[CLIENT_IN_MAX];
	size_t inlen;
	struct berth_outq out;
};

struct sup {
	const struct berth_session_spec *spec;
	struct berth_rt *sb;
	struct berth_screen *screen;
	json_t *meta;
	int master, listen_fd, sig_fd, log_fd;
	long long log_size;
	char rt_dir[PATH_MAX], st_dir[PATH_MAX];
	char trust_log[PATH_MAX + 16];
	struct client *clients[MAX_CLIENTS];
	struct berth_outq to_master;
	struct typed *typed, **typed_tail; /* waiting to be typed, oldest first */
	size_t typed_bytes;
	long long drained_ms; /* when to_master last became empty by a write */
	/* what attached clients get of the output: the agent may not drive the
	 * person's own terminal (clipboard, file transfer; termfilter.h) */
	struct berth_termfilter to_clients;
	long long last_output_ms, started_ms, stop_deadline_ms,
	    type_at_ms;           /* last_output_ms: the screen last changed */
	uint64_t screen_digest;   /* berth_screen_digest() after the last output */
	bool changed_since_drain; /* the screen changed after the pty's queue last drained */
	bool stopping;
	/* the audit trail (docs/audit.md) and the egress broker: run.h */
	struct berth_run run;
	bool run_live;
	char start_notice[1024]; /* the audit log's recovery, for berth spawn to print */
	json_t *start_extra;
	char actor[80];
	/* --review (docs/review.md, "Sessions and checkpoints"): the layer's
	 * descriptor (-1: none), the run's start, a checkpoint due */
	int review_fd;
	struct timespec review_started;
	bool turn_output;      /* the screen changed since the last checkpoint was considered */
	long long cp_retry_ms; /* > 0: ask the classifier again then */
	struct berth_agent_patterns *patterns;
};

static bool type_later(struct sup *s, enum typed_kind kind, const char *data, size_t len);

/*
 * The session's run (src/supervisor/run.h), as for `berth run`: run.start
 * and policy recorded on a thread while the sandbox is built and durable
 * before the agent starts, the broker's decisions, run.stop at the end.
 * The supervisor is detached (its stderr is /dev/null): the broker's
 * refusals are not shown (quiet; a session's own refusals are for `berth
 * stop`'s trust lines only), and the one notice written before the agent
 * starts, the audit log's recovery (docs/audit.md, "Crashes"), goes back to
 * `berth spawn` in the start message and is printed there, as by `berth run`.
 */
static void session_notice(void *arg, const char *line)
{
	struct sup *s = arg;

	if (s->start_notice[0] == '\0' && strncmp(line, "audit: ", 7) == 0)
		snprintf(s->start_notice, sizeof s->start_notice, "%s", line);
}

static int session_run_begin(struct sup *s, struct berth_runtime_opts *ro, struct berth_error *err)
{
	const struct berth_policy *p = s->spec->policy;

	snprintf(s->actor, sizeof s->actor, "session:%s:uid:%u", s->spec->name, (unsigned)getuid());
	/* "name", not "session": a member whose name holds "session" is
	 * redacted as a possible session token (docs/audit.md). */
	s->start_extra = json_pack("{s:s?, s:s, s:s?, s:s?}", "workspace", p->workspace, "name",
				   s->spec->name, "profile", s->spec->profile, "repo", s->spec->repo);
	if (s->start_extra == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	struct berth_run_spec spec = {.policy = p,
				      .runtime = s->spec->runtime,
				      .actor = s->actor,
				      .audit = true,
				      .start_extra = s->start_extra,
				      .refuse_what = "this session",
				      .notice = session_notice,
				      .notice_arg = s,
				      .quiet = true};
	berth_run_init(&s->run, &spec, NULL, err);
	berth_run_attach(&s->run, ro);
	s->run_live = true;
	return 0;
}

/* run.stop, after the broker stopped (the sandbox is freed). */
static void session_run_end(struct sup *s, int status, json_t *stop_extra)
{
	if (s->run_live)
		berth_run_end(&s->run, status, stop_extra);
	s->run_live = false;
	json_decref(s->start_extra);
	s->start_extra = NULL;
}

/* Queue @n bytes at @s unless @q would then hold more than @max. */
static bool q_put(struct berth_outq *q, const char *s, size_t n, size_t max)
{
	return q->len + n <= max && berth_outq_put(q, s, n) == 0;
}

static int attached_count(const struct sup *s)
{
	int n = 0;

	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->clients[i] != NULL && s->clients[i]->attached && !s->clients[i]->dead)
			n++;
	return n;
}

/* The terminal's answers to the agent's queries (cursor position, device
 * attributes): from libvterm while nobody is attached, from the person's own
 * terminal while someone is. */
static void on_reply(const char *buf, size_t len, void *user)
{
	struct sup *s = user;

	if (attached_count(s) == 0)
		q_put(&s->to_master, buf, len, MASTER_OUT_MAX);
}

static void client_send(struct client *c, const char *buf, size_t len)
{
	if (c->dead)
		return;
	if (!q_put(&c->out, buf, len, CLIENT_OUT_MAX))
		c->dead = true; /* a client that does not read loses its place */
}

static void client_json(struct client *c, json_t *j)
{
	char *t = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	if (t == NULL) {
		c->dead = true;
		return;
	}
	client_send(c, t, strlen(t));
	client_send(c, "\n", 1);
	free(t);
}

static void client_error(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void client_error(struct client *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	client_json(c, json_pack("{ss}", "error", msg));
}

static void log_output(struct sup *s, const char *buf, size_t len)
{
	if (s->log_fd < 0)
		return;
	if (s->log_size + (long long)len > BERTH_SESSION_LOG_MAX) {
		char a[PATH_MAX + 16], b[PATH_MAX + 16];
		snprintf(a, sizeof a, "%s/output.log", s->st_dir);
		snprintf(b, sizeof b, "%s/output.log.1", s->st_dir);
		rename(a, b);
		close(s->log_fd);
		s->log_fd = open(a, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		s->log_size = 0;
		if (s->log_fd < 0)
			return;
	}
	if (write(s->log_fd, buf, len) > 0)
		s->log_size += (long long)len;
}

/* @rows, @cols: within control.h's bounds (berth_control_parse checked them). */
static void set_size(struct sup *s, int rows, int cols)
{
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};

	ioctl(s->master, TIOCSWINSZ, &ws);
	berth_screen_resize(s->screen, rows, cols);
}

static json_t *screen_json(struct sup *s)
{
	json_t *lines = json_array();
	int rows, cols, cr, cc;

	berth_screen_size(s->screen, &rows, &cols);
	berth_screen_cursor(s->screen, &cr, &cc);
	for (int r = 0; r < rows; r++) {
		char *l = berth_screen_line(s->screen, r);
		json_array_append_new(lines, json_string(l != NULL ? l : ""));
		free(l);
	}
	return json_pack("{sosisis[ii]sbsIsb}", "lines", lines, "rows", rows, "cols", cols, "cursor", cr, cc,
			 "cursor_visible", berth_screen_cursor_visible(s->screen), "idle_ms",
			 (json_int_t)(berth_now_ms() - s->last_output_ms), "alive", 1);
}

static void begin_stop(struct sup *s, long long grace_ms)
{
	pid_t pg = tcgetpgrp(s->master);

	if (!s->stopping) {
		s->stopping = true;
		json_object_set_new(s->meta, "state", json_string("stopping"));
		struct berth_error ignore = {0};
		berth_session_meta_write(s->spec->name, s->meta, &ignore);
		berth_crash_point("session.stopping");
	}
	/* What closing a terminal does (SIGHUP: shells end on it), then
	 * SIGTERM; the whole sandbox is killed when the grace time is over. */
	if (pg > 0) {
		kill(-pg, SIGHUP);
		kill(-pg, SIGCONT);
		kill(-pg, SIGTERM);
	}
	long long d = berth_now_ms() + grace_ms;
	if (s->stop_deadline_ms == 0 || d < s->stop_deadline_ms)
		s->stop_deadline_ms = d;
}

/* One request line (@len bytes, without its newline): parsed by
 * berth_control_parse (control.h, fuzzed on its own), acted on here. */
static void handle_request(struct sup *s, struct client *c, const char *line, size_t len)
{
	struct berth_control_req r;
	char why[512];

	if (berth_control_parse(line, len, &r, why, sizeof why) < 0) {
		client_error(c, "%s", why);
		return;
	}
	switch (r.op) {
	case BERTH_CONTROL_INFO: {
		json_t *info = json_deep_copy(s->meta);
		json_object_set_new(info, "idle_ms", json_integer(berth_now_ms() - s->last_output_ms));
		json_object_set_new(info, "alive", json_true());
		client_json(c, info);
		break;
	}
	case BERTH_CONTROL_PEEK:
		client_json(c, screen_json(s));
		break;
	case BERTH_CONTROL_SEND:
		if (s->typed_bytes + s->to_master.len + r.data_len + 1 > MASTER_OUT_MAX ||
		    (r.data_len > 0 &&
		     !type_later(s, r.paste ? TYPED_TEXT : TYPED_RAW, r.data, r.data_len)) ||
		    (r.enter && !type_later(s, TYPED_ENTER, "\r", 1)))
			client_error(c, "the agent is not reading its input (1 MiB queued)");
		else
			client_json(c, json_pack("{sb}", "ok", 1));
		break;
	case BERTH_CONTROL_RESIZE:
	case BERTH_CONTROL_ATTACH:
		if (r.rows != 0)
			set_size(s, r.rows, r.cols);
		client_json(c, json_pack("{sb}", "ok", 1));
		if (r.op == BERTH_CONTROL_ATTACH) {
			size_t dlen = 0;
			char *draw = berth_screen_redraw(s->screen, &dlen);
			if (draw != NULL)
				client_send(c, draw, dlen);
			free(draw);
			c->attached = true;
		}
		break;
	case BERTH_CONTROL_STOP:
		begin_stop(s, r.grace_ms);
		client_json(c, json_pack("{sb}", "ok", 1));
		c->waiting_end = true;
		break;
	default: /* berth_control_parse returns no other op */
		client_error(c, "unknown op");
		break;
	}
	berth_control_req_free(&r);
}

static void client_read(struct sup *s, struct client *c)
{
	char buf[16384];
	ssize_t n = read(c->fd, buf, sizeof buf);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->dead = true;
		return;
	}
	if (c->attached) {
		if (!q_put(&s->to_master, buf, (size_t)n, MASTER_OUT_MAX))
			c->dead = true;
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (c->attached) { /* raw from here on */
			q_put(&s->to_master, buf + i, (size_t)(n - i), MASTER_OUT_MAX);
			return;
		}
		if (buf[i] != '\n') {
			if (c->inlen + 1 >= sizeof c->in) {
				client_error(c, "request longer than %d bytes", CLIENT_IN_MAX);
				c->dead = true;
				return;
			}
			c->in[c->inlen++] = buf[i];
			continue;
		}
		handle_request(s, c, c->in, c->inlen);
		c->inlen = 0;
	}
}

static void client_free(struct client *c)
{
	close(c->fd);
	berth_outq_free(&c->out);
	free(c);
}

static void accept_client(struct sup *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct ucred cred;
	socklen_t cl = sizeof cred;
	int slot = -1;

	if (fd < 0)
		return;
	/* The directory is 0700, and still: only the same uid. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != getuid()) {
		close(fd);
		return;
	}
	for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
		if (s->clients[i] == NULL)
			slot = i;
	struct client *c = slot >= 0 ? calloc(1, sizeof *c) : NULL;
	if (c == NULL) {
		static const char busy[] = "{\"error\":\"too many connections\"}\n";
		(void)!send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	c->fd = fd;
	s->clients[slot] = c;
}

static void pty_output(struct sup *s)
{
	char buf[65536], safe[sizeof buf + BERTH_TERMFILTER_SLACK];
	ssize_t n = read(s->master, buf, sizeof buf);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* EIO: every slave descriptor closed; the end comes by the pidfd. */
		s->master = -s->master - 2;
		return;
	}
	log_output(s, buf, (size_t)n);
	berth_screen_feed(s->screen, buf, (size_t)n);
	/* Activity is a change a reader can see: an agent that repaints the
	 * same frame, or animates only colours, at its prompt is not working. */
	uint64_t d = berth_screen_digest(s->screen);
	if (d != s->screen_digest) {
		s->screen_digest = d;
		s->last_output_ms = berth_now_ms();
		s->changed_since_drain = true;
		s->turn_output = true;
		s->cp_retry_ms = 0;
	}
	/* Filtered whether or not someone is attached, so that a client that
	 * attaches later finds the filter where the terminal is. */
	size_t m = berth_termfilter_feed(&s->to_clients, buf, (size_t)n, safe);
	for (int i = 0; m > 0 && i < MAX_CLIENTS; i++)
		if (s->clients[i] != NULL && s->clients[i]->attached)
			client_send(s->clients[i], safe, m);
}

static void flush_master(struct sup *s)
{
	if (s->master < 0 || s->to_master.len == 0)
		return;
	ssize_t n = write(s->master, s->to_master.buf, s->to_master.len);
	if (n > 0) {
		berth_outq_consume(&s->to_master, (size_t)n);
		if (s->to_master.len == 0) {
			s->drained_ms = berth_now_ms();
			s->changed_since_drain = false;
		}
	}
}

/* Queue @len bytes of @kind to be typed after what is queued already.
 * Returns false when more than MASTER_OUT_MAX bytes would wait. */
static bool type_later(struct sup *s, enum typed_kind kind, const char *data, size_t len)
{
	struct typed *t;

	if (s->typed_bytes + s->to_master.len + len > MASTER_OUT_MAX || (t = malloc(sizeof *t + len)) == NULL)
		return false;
	t->kind = kind;
	t->len = len;
	t->next = NULL;
	memcpy(t->data, data, len);
	if (s->typed == NULL)
		s->typed_tail = &s->typed;
	*s->typed_tail = t;
	s->typed_tail = &t->next;
	s->typed_bytes += len;
	return true;
}

/* Text that can go as a bracketed paste: it has a line break (a single
 * line needs none, and an answer typed into a choice dialog must stay
 * keystrokes) and no other control character, so no ESC [ 201 ~ ends the
 * paste early. */
static bool pasteable(const char *p, size_t len)
{
	bool lines = false;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\n' || c == '\r')
			lines = true;
		else if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return lines;
}

/*
 * Move what is due from the typed queue to the pty's queue: text and keys
 * at once (in order), an Enter only when everything before it was written
 * to the pty ENTER_PAUSE_MS ago.  Returns the milliseconds until the next
 * Enter is due, or -1 when nothing waits for time.
 */
static int type_due(struct sup *s, long long now)
{
	while (s->typed != NULL) {
		struct typed *t = s->typed;
		bool ok;

		if (t->kind == TYPED_ENTER) {
			if (s->to_master.len > 0)
				return -1; /* POLLOUT wakes the loop */
			if (now < s->drained_ms + ENTER_PAUSE_MS)
				return (int)(s->drained_ms + ENTER_PAUSE_MS - now);
			bool took = s->changed_since_drain && now - s->last_output_ms >= ENTER_QUIET_MS;
			if (!took && now < s->drained_ms + ENTER_WAIT_MAX_MS) {
				long long until = s->drained_ms + ENTER_WAIT_MAX_MS - now;
				return (int)(until < ENTER_QUIET_MS ? until : ENTER_QUIET_MS);
			}
		}
		if (t->kind == TYPED_TEXT && pasteable(t->data, t->len) &&
		    berth_screen_bracketed_paste(s->screen))
			ok = q_put(&s->to_master, "\033[200~", 6, MASTER_OUT_MAX + 12) &&
			     q_put(&s->to_master, t->data, t->len, MASTER_OUT_MAX + 12) &&
			     q_put(&s->to_master, "\033[201~", 6, MASTER_OUT_MAX + 12);
		else
			ok = q_put(&s->to_master, t->data, t->len, MASTER_OUT_MAX + 12);
		if (!ok)
			return -1; /* out of memory: tried again on the next round */
		s->typed = t->next;
		s->typed_bytes -= t->len;
		free(t);
	}
	return -1;
}

static void typed_free(struct sup *s)
{
	while (s->typed != NULL) {
		struct typed *t = s->typed;
		s->typed = t->next;
		free(t);
	}
	s->typed_bytes = 0;
}

static void flush_client(struct client *c)
{
	if (c->out.len == 0 || c->dead)
		return;
	ssize_t n = send(c->fd, c->out.buf, c->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		berth_outq_consume(&c->out, (size_t)n);
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		c->dead = true;
}

static int write_file(const char *dir, const char *name, const char *data, size_t len)
{
	char path[PATH_MAX + 64];
	struct berth_error ignore = {0}; /* the screen is a courtesy: `berth peek` says when it is missing */

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return berth_write_atomic(path, data, len, 0600, 0, &ignore);
}

/* The agent ended: keep its last screen and status for `berth ps/peek`. */
static void finish(struct sup *s, int status)
{
	json_t *scr = screen_json(s);
	struct berth_error ignore = {0};
	char *text;
	time_t now = time(NULL);

	json_object_set_new(scr, "alive", json_false());
	json_object_set_new(scr, "exit", json_integer(status));
	text = json_dumps(scr, JSON_COMPACT);
	if (text != NULL)
		write_file(s->rt_dir, "screen.json", text, strlen(text));
	free(text);
	berth_crash_point("session.screen");
	json_decref(scr);
	json_object_set_new(s->meta, "state", json_string("exited"));
	json_object_set_new(s->meta, "exit_status", json_integer(status));
	json_object_set_new(s->meta, "ended", json_integer((json_int_t)now));
	berth_session_meta_write(s->spec->name, s->meta, &ignore);
	berth_crash_point("session.exited");
}

/* One record of the audit trail for this session's run, by its actor; a
 * failure goes to the output log's reader as nothing: the supervisor is
 * detached (the checkpoint itself is kept either way). */
static void audit_record(struct sup *s, const char *kind, json_t *payload)
{
	struct berth_error ignore = {0};
	struct berth_audit *au = berth_audit_open(NULL, &ignore);

	if (au != NULL)
		berth_audit_append(au, berth_run_id(&s->run), kind, s->actor, payload, NULL, NULL, &ignore);
	berth_audit_close(au);
}

/* The agent's state now, from its screen (agent_state.h). */
static enum berth_agent_state agent_state_now(struct sup *s)
{
	int rows, cols, cr, cc;
	enum berth_agent_state st;

	berth_screen_size(s->screen, &rows, &cols);
	berth_screen_cursor(s->screen, &cr, &cc);
	char **lines = calloc((size_t)rows + 1, sizeof *lines);
	if (lines == NULL)
		return BERTH_AGENT_WORKING;
	for (int r = 0; r < rows; r++)
		lines[r] = berth_screen_line(s->screen, r);
	struct berth_screen_view v = {.lines = (const char *const *)lines,
				      .n_lines = rows,
				      .cursor_row = berth_screen_cursor_visible(s->screen) ? cr : -1,
				      .cursor_col = cc,
				      .alive = true,
				      .exit_status = -1,
				      .idle_ms = berth_now_ms() - s->last_output_ms};
	st = berth_agent_classify(s->patterns, &v, NULL);
	for (int r = 0; r < rows; r++)
		free(lines[r]);
	free(lines);
	return st;
}

/*
 * --review: the agent finished a turn (idle or done, the screen still for
 * CHECKPOINT_QUIET_MS after it changed): the change set of its layer as a
 * checkpoint (review.h), and a `checkpoint` record in the audit trail.  The
 * layer is only read; the agent waits at its prompt meanwhile.  A layer
 * unchanged since the last checkpoint is not recorded again.
 */
static void checkpoint_due(struct sup *s)
{
	struct berth_review_checkpoint cp;
	struct berth_error err = {0};
	enum berth_agent_state st = agent_state_now(s);
	json_t *rec;

	if (st != BERTH_AGENT_IDLE && st != BERTH_AGENT_DONE) {
		s->cp_retry_ms = berth_now_ms() + CHECKPOINT_RETRY_MS;
		return;
	}
	s->turn_output = false;
	s->cp_retry_ms = 0;
	long long t0 = berth_now_ms();
	if (berth_review_checkpoint(berth_run_id(&s->run), s->spec->policy, s->review_fd, &s->review_started,
				    &cp, &err) < 0) {
		rec = json_pack("{s:s, s:s}", "error", err.msg, "state", berth_agent_state_name(st));
		audit_record(s, "checkpoint.failed", rec);
		json_decref(rec);
		return;
	}
	if (cp.id == 0)
		return;
	rec = json_pack("{s:i, s:s, s:I, s:I, s:I, s:s, s:I}", "checkpoint", cp.id, "digest", cp.sum.digest,
			"entries", (json_int_t)cp.sum.n_entries, "changed", (json_int_t)cp.changed, "bytes",
			(json_int_t)cp.sum.n_bytes, "state", berth_agent_state_name(st), "duration_ms",
			(json_int_t)(berth_now_ms() - t0));
	audit_record(s, "checkpoint", rec);
	json_decref(rec);
}

/* When checkpoint_due() is next to run (-1: not now). */
static long long checkpoint_at(const struct sup *s)
{
	if (s->review_fd < 0 || !s->turn_output || s->stopping)
		return -1;
	return s->cp_retry_ms > 0 ? s->cp_retry_ms : s->last_output_ms + CHECKPOINT_QUIET_MS;
}

/* --review, the sandbox gone: the change set from the layer (as `berth run
 * --review`'s end), for run.stop's "review" member; NULL when it could not
 * be kept (the checkpoints remain). */
static json_t *review_end(struct sup *s, const char *run_id)
{
	struct berth_review_summary sum;
	struct berth_error err = {0};
	json_t *rec;

	if (s->review_fd < 0)
		return NULL;
	if (berth_review_collect(run_id, s->spec->policy, s->review_fd, &s->review_started, &sum, &err) < 0) {
		rec = json_pack("{s:s}", "error", err.msg);
		audit_record(s, "review.failed", rec);
		json_decref(rec);
		close(s->review_fd);
		s->review_fd = -1;
		return NULL;
	}
	close(s->review_fd);
	s->review_fd = -1;
	return json_pack("{s:{s:s, s:I, s:I, s:I, s:b, s:b}}", "review", "digest", sum.digest, "entries",
			 (json_int_t)sum.n_entries, "guarded", (json_int_t)sum.n_guarded, "bytes",
			 (json_int_t)sum.n_bytes, "layer_full", sum.full, "host_modified", 0);
}

static int loop(struct sup *s)
{
	int pidfd = berth_rt_pidfd(s->sb), status = 0;

	for (;;) {
		struct pollfd p[4 + MAX_CLIENTS];
		int map[4 + MAX_CLIENTS], n = 0, timeout = -1;
		long long now = berth_now_ms();

		if (s->type_at_ms > 0 && now >= s->type_at_ms) {
			type_later(s, TYPED_TEXT, s->spec->type_text, strlen(s->spec->type_text));
			type_later(s, TYPED_ENTER, "\r", 1);
			s->type_at_ms = 0;
		}
		int enter_in = type_due(s, now);
		if (s->stop_deadline_ms > 0 && now >= s->stop_deadline_ms) {
			berth_rt_kill(s->sb);
			s->stop_deadline_ms = 0;
		}
		if (s->type_at_ms > 0)
			timeout = (int)(s->type_at_ms - now);
		if (enter_in >= 0 && (timeout < 0 || enter_in < timeout))
			timeout = enter_in;
		if (s->stop_deadline_ms > 0 && (timeout < 0 || s->stop_deadline_ms - now < timeout))
			timeout = (int)(s->stop_deadline_ms - now);
		long long cp_at = checkpoint_at(s);
		if (cp_at >= 0 && now >= cp_at) {
			checkpoint_due(s);
			continue;
		}
		if (cp_at >= 0 && (timeout < 0 || cp_at - now < timeout))
			timeout = (int)(cp_at - now);

		p[n] = (struct pollfd){pidfd, POLLIN, 0};
		map[n++] = -1;
		p[n] = (struct pollfd){s->listen_fd, POLLIN, 0};
		map[n++] = -2;
		p[n] = (struct pollfd){s->sig_fd, POLLIN, 0};
		map[n++] = -3;
		if (s->master >= 0) {
			p[n] =
			    (struct pollfd){s->master, (short)(POLLIN | (s->to_master.len ? POLLOUT : 0)), 0};
			map[n++] = -4;
		}
		for (int i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = s->clients[i];
			if (c == NULL)
				continue;
			if (c->dead) {
				client_free(c);
				s->clients[i] = NULL;
				continue;
			}
			p[n] = (struct pollfd){c->fd, (short)(POLLIN | (c->out.len ? POLLOUT : 0)), 0};
			map[n++] = i;
		}
		if (poll(p, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < n; k++) {
			if (p[k].revents == 0)
				continue;
			if (map[k] == -1) {
				/* The sandbox ended: drain what the pty still holds. */
				while (s->master >= 0) {
					struct pollfd q = {s->master, POLLIN, 0};
					if (poll(&q, 1, 0) <= 0)
						break;
					pty_output(s);
				}
				if (berth_rt_wait(s->sb, &status) < 0)
					status = 125;
				goto end;
			} else if (map[k] == -2) {
				accept_client(s);
			} else if (map[k] == -3) {
				struct signalfd_siginfo si;
				if (read(s->sig_fd, &si, sizeof si) == (ssize_t)sizeof si)
					begin_stop(s, DEFAULT_GRACE_MS);
			} else if (map[k] == -4) {
				if (p[k].revents & POLLOUT)
					flush_master(s);
				if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
					pty_output(s);
			} else {
				struct client *c = s->clients[map[k]];
				if (p[k].revents & POLLOUT)
					flush_client(c);
				if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
					client_read(s, c);
			}
		}
		flush_master(s);
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (s->clients[i] != NULL)
				flush_client(s->clients[i]);
	}
	berth_rt_kill(s->sb);
	if (berth_rt_wait(s->sb, &status) < 0)
		status = 125;
end:
	return status;
}

/* The end of a session, in an order that makes `berth stop` truthful: the
 * screen and status are kept, the sandbox is gone (reaped, cgroups removed),
 * the socket and the lock are released, and only then do the clients that
 * wait for the end see their connections close. */
static void end_session(struct sup *s, int status)
{
	char path[PATH_MAX + 16], run_id[17];
	json_t *review;

	finish(s, status);
	typed_free(s);
	snprintf(run_id, sizeof run_id, "%s", berth_run_id(&s->run));
	berth_rt_free(s->sb);
	s->sb = NULL;
	review = review_end(s, run_id);
	session_run_end(s, status, review);
	json_decref(review);
	berth_agent_patterns_free(s->patterns);
	berth_crash_point("session.run_end");
	snprintf(path, sizeof path, "%s/ctl.sock", s->rt_dir);
	unlink(path);
	close(s->spec->lock_fd);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = s->clients[i];
		if (c == NULL)
			continue;
		if (c->waiting_end && !c->attached)
			client_json(c, json_pack("{sbsi}", "ended", 1, "exit_status", status));
		for (int tries = 0; tries < 50 && c->out.len > 0 && !c->dead; tries++) {
			struct pollfd q = {c->fd, POLLOUT, 0};
			poll(&q, 1, 20);
			flush_client(c);
		}
		client_free(c);
		s->clients[i] = NULL;
	}
}

static int bind_socket(struct sup *s, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t old;

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/ctl.sock", s->rt_dir);
	unlink(sa.sun_path);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		return berth_err(err, errno, "socket");
	old = umask(0077);
	int r = bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (r < 0 || listen(s->listen_fd, 64) < 0)
		return berth_err(err, errno, "cannot listen on `%s`", sa.sun_path);
	return 0;
}

static json_t *make_meta(const struct sup *s, const struct berth_session_spec *sp)
{
	static const char *const nets[] = {"none", "host", "proxy"};
	char digest[65] = "";
	struct berth_error ignore = {0};
	json_t *hosts = json_array();
	const struct berth_policy *p = sp->policy;

	berth_policy_digest(p, digest, &ignore);
	for (size_t i = 0; i < p->n_allow_hosts; i++)
		json_array_append_new(hosts, json_string(p->allow_hosts[i]));
	json_t *m = json_pack("{sssssssssssos[]sIsIsisssbsssi}", "name", sp->name, "profile", sp->profile,
			      "agent", sp->agent, "workspace", p->workspace, "network",
			      p->network <= BERTH_NET_PROXY ? nets[p->network] : "?", "allow_hosts", hosts,
			      "command", "started", (json_int_t)time(NULL), "pid", (json_int_t)getpid(),
			      "exit_status", -1, "state", "running", "managed_workspace",
			      sp->managed_workspace, "run_id", berth_rt_run_id(s->sb), "uid", (int)getuid());
	if (m == NULL)
		return NULL;
	json_t *argv = json_object_get(m, "command");
	for (size_t i = 0; i < p->argc; i++)
		json_array_append_new(argv, json_string(p->argv[i]));
	json_object_set_new(m, "policy_digest", json_sprintf("sha256:%s", digest));
	json_object_set_new(m, "repo", sp->repo ? json_string(sp->repo) : json_null());
	json_object_set_new(m, "home", p->home_dir ? json_string(p->home_dir) : json_null());
	json_object_set_new(m, "review",
			    json_boolean(p->review)); /* docs/review.md, "Sessions and checkpoints" */
	json_object_set_new(m, "log", json_sprintf("%s/output.log", s->st_dir));
	json_object_del(m, "exit_status");
	json_object_set_new(m, "exit_status", json_null());
	return m;
}

/* The supervisor, from its start to its end.  @wfd receives one message:
 * the ready pid, or the error. */
struct start_msg {
	int ok;
	pid_t pid;
	struct berth_error err;
	char notice[1024]; /* "audit: ..." when the log was recovered, else empty */
};

static __attribute__((noreturn)) void supervisor_main(const struct berth_session_spec *sp, int wfd)
{
	struct sup s = {
	    .spec = sp, .master = -1, .listen_fd = -1, .sig_fd = -1, .log_fd = -1, .review_fd = -1};
	berth_termfilter_init(&s.to_clients);
	struct start_msg m = {0};
	struct berth_runtime_opts ro = sp->ro;
	sigset_t set;
	char path[PATH_MAX + 16];
	struct stat st;

	signal(SIGPIPE, SIG_IGN);
	if (berth_session_runtime_dir(sp->name, true, s.rt_dir, sizeof s.rt_dir, &m.err) < 0 ||
	    berth_session_state_dir(sp->name, true, s.st_dir, sizeof s.st_dir, &m.err) < 0)
		goto fail;
	berth_crash_point("session.dirs");
	snprintf(path, sizeof path, "%s/output.log", s.st_dir);
	s.log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s.log_fd < 0) {
		berth_err(&m.err, errno, "cannot open `%s`", path);
		goto fail;
	}
	if (fstat(s.log_fd, &st) == 0)
		s.log_size = st.st_size;
	berth_crash_point("session.log");
	/* What the sandbox planted on the host's trust surface, for `berth
	 * stop` to show (this session's only). */
	snprintf(s.trust_log, sizeof s.trust_log, "%s/trust.log", s.st_dir);
	if (unlink(s.trust_log) < 0 && errno != ENOENT) {
		berth_err(&m.err, errno, "cannot remove `%s`", s.trust_log);
		goto fail;
	}
	ro.trust_log = s.trust_log;
	s.screen = berth_screen_new(sp->rows, sp->cols, on_reply, &s, &m.err);
	if (s.screen == NULL || bind_socket(&s, &m.err) < 0)
		goto fail;
	berth_crash_point("session.socket");
	/* The agent's terminal is what libvterm emulates. */
	setenv("TERM", "xterm-256color", 1);
	ro.want_pty = true;
	ro.quiet = true;
	ro.pty_rows = (unsigned short)sp->rows;
	ro.pty_cols = (unsigned short)sp->cols;
	if (sp->policy->review) {
		/* the agent's turns are told apart by its screen: without its
		 * pattern set, a quiet screen is a finished turn */
		struct berth_error ignore = {0};
		s.patterns = sp->agent != NULL ? berth_agent_patterns_load(sp->agent, &ignore) : NULL;
		berth_review_clock(&s.review_started);
		ro.review_fd = &s.review_fd;
	}
	if (session_run_begin(&s, &ro, &m.err) < 0 || berth_run_start(&s.run, &ro, &s.sb, &m.err) < 0)
		goto fail;
	berth_crash_point("session.sandbox");
	s.master = berth_rt_pty_master(s.sb);
	if (s.master < 0) {
		berth_err(&m.err, 0, "the sandbox has no pseudo-terminal");
		goto fail;
	}
	fcntl(s.master, F_SETFL, fcntl(s.master, F_GETFL) | O_NONBLOCK);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	s.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	s.meta = make_meta(&s, sp);
	if (s.sig_fd < 0 || s.meta == NULL || berth_session_meta_write(sp->name, s.meta, &m.err) < 0) {
		if (m.err.msg[0] == '\0')
			berth_err(&m.err, errno, "cannot set up the session supervisor");
		goto fail;
	}
	berth_crash_point("session.meta");
	s.started_ms = s.last_output_ms = berth_now_ms();
	if (sp->type_text != NULL && sp->type_text[0] != '\0')
		s.type_at_ms = s.started_ms + 1000;
	m.ok = 1;
	m.pid = getpid();
	memcpy(m.notice, s.start_notice, sizeof m.notice);
	(void)!write(wfd, &m, sizeof m);
	close(wfd);
	end_session(&s, loop(&s));
	_exit(0);
fail:
	berth_rt_free(s.sb);
	memcpy(m.notice, s.start_notice, sizeof m.notice);
	if (s.review_fd >= 0)
		close(s.review_fd);
	session_run_end(&s, m.err.status ? m.err.status : 125, NULL);
	if (s.rt_dir[0] != '\0') {
		snprintf(path, sizeof path, "%s/ctl.sock", s.rt_dir);
		unlink(path);
	}
	(void)!write(wfd, &m, sizeof m);
	_exit(1);
}

/* Close every descriptor >= 3 but @a and @b. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned from = 3;

	for (int k = 0; k < 2; k++) {
		int keep = k == 0 ? lo : hi;
		if (keep < (int)from)
			continue;
		if ((unsigned)keep > from)
			syscall(SYS_close_range, from, (unsigned)keep - 1, 0);
		from = (unsigned)keep + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

int berth_session_start(const struct berth_session_spec *spec, pid_t *pid, char *notice, size_t notice_len,
			struct berth_error *err)
{
	int pfd[2];
	pid_t mid;
	struct start_msg m = {0};
	ssize_t n;

	if (notice != NULL && notice_len > 0)
		notice[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return berth_err(err, errno, "pipe");
	fflush(NULL);
	mid = fork();
	if (mid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return berth_err(err, errno, "cannot fork the session supervisor");
	}
	if (mid == 0) {
		/* Detach: a new session, no terminal, and the intermediate
		 * process exits so the supervisor is nobody's child here. */
		close(pfd[0]);
		setsid();
		pid_t sup = fork();
		if (sup != 0)
			_exit(sup < 0 ? 1 : 0);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		close_others(pfd[1], spec->lock_fd);
		/* Hold no directory of the caller's busy (every path is absolute
		 * by now). */
		if (chdir("/") < 0)
			_exit(1);
		supervisor_main(spec, pfd[1]);
	}
	close(pfd[1]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	do
		n = read(pfd[0], &m, sizeof m);
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n != (ssize_t)sizeof m) {
		return berth_err(err, 0, "the session supervisor of `%s` died while starting", spec->name);
	}
	m.notice[sizeof m.notice - 1] = '\0';
	if (notice != NULL && notice_len > 0)
		snprintf(notice, notice_len, "%s", m.notice);
	if (!m.ok) {
		*err = m.err;
		if (err->status == 0)
			err->status = BERTH_EXIT_INTERNAL;
		return -1;
	}
	*pid = m.pid;
	return 0;
}
