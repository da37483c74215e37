#!/bin/bash
# The format check: every tracked *.c and *.h under src/, tests/, fuzz/, bench/
# and apps/ must be as clang-format 14 (Debian 12's) formats it with the
# tree's .clang-format.  Changes nothing: prints each file that differs, with
# the number of lines a reformat would change, and exits 1 if any does (0 when
# all are formatted, 2 when clang-format 14 is not there).
#   scripts/check-format.sh          the check (.ci/run's format lane)
#   scripts/check-format.sh --diff   also show each file's diff
# CLANG_FORMAT names another binary; its major version must be 14 (other
# versions format the same options differently).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
show_diff=0
case ${1:-} in
--diff) show_diff=1 ;;
"") ;;
*) echo "usage: $0 [--diff]" >&2; exit 2 ;;
esac

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format-14 clang-format; do command -v "$c" >/dev/null && { cf=$c; break; }; done
fi
if [ -z "$cf" ]; then
	# shellcheck source=deps.sh
	. "$top/scripts/deps.sh"
	berth_ensure_deps clang-format || exit 2
	cf=clang-format
fi
ver=$("$cf" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
if [ "$ver" != 14 ]; then
	echo "check-format: \`$cf\` is clang-format ${ver:-of an unknown version}, not 14 (Debian 12's \`apt-get install clang-format\`); set CLANG_FORMAT" >&2
	exit 2
fi

# The tracked files (a copy without .git, as tests/run stages: all of them).
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -d '' files < <(git -C "$top" ls-files -z -- 'src/*.[ch]' 'tests/*.[ch]' 'fuzz/*.[ch]' 'bench/*.[ch]' 'apps/*.[ch]')
else
	mapfile -d '' files < <(find src tests fuzz bench apps -name '*.[ch]' -type f -print0 2>/dev/null | sort -z)
fi
[ ${#files[@]} -gt 0 ] || { echo "check-format: no C files found under $top" >&2; exit 2; }

# A .clang-format clang-format cannot read would check every file against
# another style.
if ! msg=$("$cf" --style=file --dump-config "${files[0]}" 2>&1 >/dev/null); then
	echo "check-format: clang-format cannot use $top/.clang-format: $(printf '%s\n' "$msg" | head -n 1)" >&2
	exit 2
fi
bad=0 lines=0
for f in "${files[@]}"; do
	if msg=$("$cf" --style=file --dry-run --Werror "$f" 2>&1); then
		continue
	fi
	n=$("$cf" --style=file "$f" 2>/dev/null | diff "$f" - | grep -c '^[<>]')
	if [ "$n" -eq 0 ]; then # not a format difference: clang-format itself failed
		echo "$f: clang-format failed: $(printf '%s\n' "$msg" | head -n 3)"
	else
		echo "$f: $n lines differ"
	fi
	[ "$show_diff" -eq 1 ] && "$cf" --style=file "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" -
	bad=$((bad + 1)) lines=$((lines + n))
done
if [ "$bad" -gt 0 ]; then
	echo "check-format: $bad of ${#files[@]} files are not formatted ($lines lines differ): \`$cf -i FILE\`, or $0 --diff to see them"
	exit 1
fi
echo "check-format: ${#files[@]} files formatted"
