#!/usr/bin/env bash
# tests/unit/layers.sh - the include graph of src/ points only down the layers
# of docs/architecture.md ("Layers").  Reads every `#include "../X/..."` in
# src/ and fails (TAP "not ok") on an edge the table below does not allow.
#
# usage: layers.sh [SRC_DIR]      (default: src/ next to this script's tests/)
#
# A directory may always include its own files; a file of a subdirectory
# (src/vm/guest) belongs to its top directory's layer.  The allowed edges, each
# layer listing what it may include:
#   util                          nothing (the bottom)
#   policy    -> util
#   runtime   -> policy util        (the interface: src/runtime)
#   sandbox   -> runtime policy util (the namespace runtime)
#   vm        -> runtime sandbox policy util (the microVM runtime, and its
#                 guest init, which applies the sandbox's Landlock/seccomp/caps)
#   broker    -> policy util
#   audit     -> policy util
#   manifest  -> policy util
#   supervisor-> audit broker manifest runtime sandbox policy util
#   session   -> supervisor audit broker manifest runtime sandbox policy util
#   export    -> session and everything below it (berth export k8s)
#   oci       -> session and everything below it (`berth oci`: over the run
#                 lifecycle; berth.dev/profile reads agent profiles)
#   cli       -> everything
# In words: util <- policy <- {runtime <- sandbox, broker, audit, manifest}
# <- supervisor <- session <- {export, oci} <- cli.  A runtime (sandbox, and an OCI or microVM
# runtime next to it) never reaches the supervisor's services: they attach
# through struct berth_run_hooks.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:-$here/../../src}
[ -d "$src" ] || { echo "layers.sh: no source directory \`$src\`" >&2; exit 2; }

declare -A allow=(
	[util]=""
	[policy]="util"
	[runtime]="policy util"
	[sandbox]="runtime policy util"
	[vm]="runtime sandbox policy util"
	[broker]="policy util"
	[audit]="policy util"
	[manifest]="policy util"
	[supervisor]="audit broker manifest runtime sandbox policy util"
	[session]="supervisor audit broker manifest runtime sandbox policy util"
	[export]="session supervisor audit broker manifest runtime sandbox policy util"
	[oci]="session supervisor audit broker manifest runtime sandbox policy util"
	[cli]="export session oci vm supervisor audit broker manifest runtime sandbox policy util"
)

n=0
fail=0
bad_lines=()
unknown=()
for dir in "$src"/*/; do
	layer=$(basename "$dir")
	if [ -z "${allow[$layer]+x}" ]; then
		unknown+=("$layer")
		continue
	fi
	while IFS= read -r hit; do
		[ -n "$hit" ] || continue
		file=${hit%%:*}
		rest=${hit#*:}
		line=${rest%%:*}
		target=$(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(\.\./\)\{1,\}\([^/".][^/"]*\)/.*|\2|p' <<<"${rest#*:}")
		[ -n "$target" ] || continue
		n=$((n + 1))
		[ "$target" = "$layer" ] && continue
		case " ${allow[$layer]} " in
		*" $target "*) ;;
		*) bad_lines+=("${file#"$src"/}:$line: $layer -> $target") ;;
		esac
	done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' "$dir" --include='*.c' --include='*.h' --include='*.def')
done

echo "1..3"
if [ "$n" -gt 0 ]; then
	echo "ok 1 - $n cross-directory includes read"
else
	echo "not ok 1 - no \`#include \"../X/...\"\` found under $src (wrong directory?)"
	fail=1
fi
if [ ${#unknown[@]} -eq 0 ]; then
	echo "ok 2 - every directory of src/ has a layer"
else
	echo "not ok 2 - directories with no layer in tests/unit/layers.sh: ${unknown[*]} (add them to the table and to docs/architecture.md)"
	fail=1
fi
if [ ${#bad_lines[@]} -eq 0 ]; then
	echo "ok 3 - every include points down the layers"
else
	echo "not ok 3 - ${#bad_lines[@]} include(s) point up or across the layers:"
	for b in "${bad_lines[@]}"; do
		echo "#   $b"
	done
	fail=1
fi
exit $fail
