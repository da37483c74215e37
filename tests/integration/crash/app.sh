# shellcheck shell=bash disable=SC2034 # SC_SKIP, SC_DIES: read by the harness
# Crash scenarios of the area `app` (the contract:
# tests/integration/run-crash.sh): the points app.* of
# src/supervisor/app_policy.c, a resident app's first boot under `berth rpc`
# (its state_dir, origin, workspace; for root also identity, a new line in
# /run/berth/identities, which only a state directory never seen before
# gets).  The app is the tree's apps/notes, copied once per scenario under a
# name of its own (notes-N), so that every scenario is a first boot with a
# fresh state directory in the harness's state, and its directory's path
# holds $MARK (the harness's process check then sees the berth rpc and all
# it started).  tests/integration/run-state-crash.sh asserts the same points
# on its own.
#
# After the kill: nothing answered, the app's origin absent or whole (never
# empty), no temporary file in its state, and the next call works, answers
# as a first call would and warns about nothing, and origin names the app.

_APP_SRC=$HERE/../../apps/notes
[ -d "$_APP_SRC" ] || _APP_SRC=$TREE/apps/notes
APP_N=0

variant_app() { echo first-boot; }

scenario_app() {
	local p=$1
	if [ "$p" = app.identity ] && [ "$(id -u)" -ne 0 ]; then
		SC_SKIP="not on uid $(id -u)'s path: an unprivileged caller's app identity is hashed, no /run/berth/identities line is written"
		return
	fi
	APP_N=$((APP_N + 1))
	APP_NAME=notes-$APP_N
	APP=$TOP/app-$MARK-$APP_N
	APP_STATE=$STATE/apps/$APP_NAME
	cp -r "$_APP_SRC" "$APP"
	sed -i "s/^name: notes\$/name: $APP_NAME/" "$APP/berth.yml"
	chmod -R a+rX "$APP"
	crash_berth rpc "$APP_NAME" --app-dir "$APP" --export add_note --input '{"text":"one"}'
}

check_app() {
	local p=$1 o out err rc
	eq "$p: berth rpc answered nothing" "$SC_OUT" ""
	o=$APP_STATE/origin
	if [ ! -e "$o" ] || [ "$(cat "$o")" = "$APP" ]; then
		pass "$p: origin absent or whole (never empty)"
	else
		fail "$p: origin absent or whole (never empty)" "origin: '$(cat "$o")'"
	fi
	eq "$p: no temporary file in the app's state" "$(find "$APP_STATE" -name '*.tmp' 2>/dev/null)" ""
	eq "$p: the killed boot left no journal (it was before the app's run)" "${#KILLED_IDS[@]}" 0
	# the next call, not killed this time: a first call's answer (the
	# killed one added nothing), no warning
	(cd "$WS" && "$BERTH" rpc "$APP_NAME" --app-dir "$APP" --export add_note --input '{"text":"two"}') \
		</dev/null >"$TOP/app.out" 2>"$TOP/app.err"
	rc=$?
	out=$(cat "$TOP/app.out")
	err=$(grep -v '^berth: limits: ' "$TOP/app.err")
	eq "$p: the next call works and prints no warning" "$rc:$out:$err" '0:{"id":1}:'
	eq "$p: origin names the app directory" "$(cat "$o" 2>/dev/null)" "$APP"
}
