# SPDX-License-Identifier: MIT
"""notes - a resident app keeping a to-do list in /workspace/notes.json.

The file is replaced atomically (a temporary file in the same directory,
fsync, rename), so a crash leaves either the old list or the new one.
Several instances may serve one workspace at once (every `berth rpc` boots
its own): each call holds an flock(2) on /workspace/.notes.lock from its
read to its rename, exclusive for a change and shared for a listing, so no
two calls hand out one id and no note is lost.
"""

import contextlib
import fcntl
import json
import os
import tempfile

import berth_app

STORE = "notes.json"  # relative: berth starts the app in /workspace
LOCK = ".notes.lock"


@contextlib.contextmanager
def _locked(exclusive):
    """Hold LOCK (made if missing; never removed: removing it would let two
    callers lock two different files) for the read-modify-write."""
    try:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise berth_app.os_error(e, "open", LOCK)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError as e:
            raise berth_app.os_error(e, "flock", LOCK)
        yield
    finally:
        os.close(fd)  # releases the lock

app = berth_app.App()


def _load():
    try:
        with open(STORE, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {"next_id": 1, "notes": []}
    except OSError as e:
        raise berth_app.os_error(e, "open", STORE)
    except ValueError as e:
        raise berth_app.AppError("%s is not valid JSON: %s" % (STORE, e))
    if (not isinstance(data, dict) or not isinstance(data.get("next_id"), int)
            or not isinstance(data.get("notes"), list)):
        raise berth_app.AppError("%s does not hold a notes list" % STORE)
    return data


def _sweep():
    """Remove the temporary files of writers that were killed before their
    rename: the caller holds the exclusive lock, so no live writer has one."""
    try:
        names = os.listdir(".")
    except OSError:
        return
    for name in names:
        if name.startswith(".notes.") and name.endswith(".tmp"):
            try:
                os.unlink(name)
            except OSError:
                pass


def _save(data):
    _sweep()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".notes.", suffix=".tmp", dir=".")
    except OSError as e:
        raise berth_app.os_error(e, "open", ".")
    step = ("write", tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
            f.flush()
            step = ("fsync", tmp)
            os.fsync(f.fileno())
        step = ("rename", STORE)
        os.replace(tmp, STORE)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise berth_app.os_error(e, *step)
    try:  # make the rename itself durable; not fatal where unsupported
        dfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _note_id(value, where):
    if isinstance(value, bool) or not isinstance(value, int):
        raise berth_app.InvalidParams(where, "expected integer")
    return value


@app.export("add_note")
def add_note(text):
    if not isinstance(text, str):
        raise berth_app.InvalidParams("$.text", "expected string")
    if not text.strip():
        raise berth_app.InvalidParams("$.text", "must not be empty")
    with _locked(True):
        data = _load()
        note_id = data["next_id"]
        data["notes"].append({"id": note_id, "text": text, "done": False})
        data["next_id"] = note_id + 1
        _save(data)
    return {"id": note_id}


@app.export("list_notes")
def list_notes():
    with _locked(False):
        return {"notes": _load()["notes"]}


@app.export("complete_note")
def complete_note(id):  # noqa: A002 - the input property is called id
    note_id = _note_id(id, "$.id")
    with _locked(True):
        data = _load()
        for note in data["notes"]:
            if isinstance(note, dict) and note.get("id") == note_id:
                note["done"] = True
                _save(data)
                return {"id": note_id, "done": True}
    raise berth_app.AppError("no note with id %d" % note_id)


if __name__ == "__main__":
    app.run()
