# shellcheck shell=bash
# Crash scenarios of the area `app` for tests/integration/run-crash.sh: the
# points app.* of src/supervisor/app_policy.c (a resident app's first boot:
# state_dir, origin, workspace; for root also identity, a new line in
# /run/berth/identities).  The harness exports BERTH_TEST_CRASH_AT, runs
# scenario_app, then check_app; $B is berth, $T a fresh directory (the state
# and configuration directories fresh ones under it), `check NAME CMD...`
# the harness's assertion.  The app is apps/notes of the tree this file is
# in.  tests/integration/run-state-crash.sh asserts the same on its own.

_APP_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../apps/notes" 2>/dev/null && pwd)

_app_env() {
	export XDG_RUNTIME_DIR=$T/run
	[ -d "$XDG_RUNTIME_DIR" ] || mkdir -m 700 "$XDG_RUNTIME_DIR"
	APP=$T/notes
	[ -d "$APP" ] || { cp -r "$_APP_SRC" "$APP" && chmod -R a+rX "$APP" && chmod 755 "$T"; }
	APP_STATE=${XDG_STATE_HOME:-$HOME/.local/state}/berth/apps/notes
}

# A first boot and a call.
scenario_app() {
	_app_env
	(cd "$T" && "$B" rpc notes --app-dir "$APP" --export add_note --input '{"text":"one"}' \
		</dev/null >"$T/app.out" 2>"$T/app.err")
	return 0
}

_app_origin_whole() { # origin absent or exactly the app directory (never empty)
	local o=$APP_STATE/origin
	[ ! -e "$o" ] || [ "$(cat "$o")" = "$APP" ]
}
_app_no_tmp() { [ -z "$(find "$APP_STATE" -name '*.tmp' 2>/dev/null)" ]; }
_app_again() ( # the next call works and warns about nothing (not killed this time)
	unset BERTH_TEST_CRASH_AT
	local out err
	out=$(cd "$T" && "$B" rpc notes --app-dir "$APP" --export list_notes --input '{}' </dev/null 2>"$T/app.err2") ||
		return 1
	err=$(grep -v '^berth: limits: ' "$T/app.err2")
	[ -z "$err" ] && [ "${out#\{\"notes\":}" != "$out" ] && [ "$(cat "$APP_STATE/origin")" = "$APP" ]
)

check_app() {
	_app_env
	check "app ($BERTH_TEST_CRASH_AT): origin absent or whole, never empty" _app_origin_whole
	check "app ($BERTH_TEST_CRASH_AT): no temporary file in the app's state" _app_no_tmp
	check "app ($BERTH_TEST_CRASH_AT): the next call works, no false warning" _app_again
	check "app ($BERTH_TEST_CRASH_AT): the audit trail verifies" env -u BERTH_TEST_CRASH_AT "$B" audit verify
}
