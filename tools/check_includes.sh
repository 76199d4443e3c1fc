#!/bin/sh
# The include check (make check-includes, first in make check): every
# `#include "folder/file.h"` in a module's sources must be an arrow that the module
# table in HACKING.md allows (its "may include" column), and no module may include
# another module's private header (*_int.h). The table is read from between the
# `<!-- modules -->` and `<!-- /modules -->` lines, one row per folder:
#   | `folder/` | what it owns | `a` `b` ... |      (— : nothing)
# Usage: tools/check_includes.sh [ROOT]   (exit 1 with one line per bad arrow)
#        tools/check_includes.sh --self-test (a tree with each kind of bad arrow)
set -eu
if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d) || exit 1
	trap 'rm -rf "$t"' EXIT
	mkdir "$t/lo" "$t/hi"
	printf '%s\n' '<!-- modules -->' '| folder | owns | may include |' '|---|---|---|' \
		'| `lo/` | the floor | — |' '| `hi/` | above it | `lo/` |' '<!-- /modules -->' >"$t/HACKING.md"
	printf '#include "lo/lo.h"\n#include "hi/hi_int.h"\n' >"$t/hi/ok.c"
	: >"$t/lo/lo.h"
	"$0" "$t" >"$t/out" || { echo "check_includes self-test: a good tree refused:"; cat "$t/out"; exit 1; }
	printf '#include "hi/hi.h"\n' >"$t/lo/up.c"		# an arrow back up
	printf '#include "lo/lo_int.h"\n' >"$t/hi/priv.c"	# another folder's private header
	mkdir "$t/new" && : >"$t/new/n.c"			# a folder the table does not know
	if "$0" "$t" >"$t/out"; then echo "check_includes self-test: a bad tree passed"; exit 1; fi
	for want in 'lo/up.c:1: lo/ may not include hi/hi.h' 'hi/priv.c:1: lo/lo_int.h is private to lo/' \
		'folder new/ is not in'; do
		grep -qF "$want" "$t/out" || { echo "check_includes self-test: missing \"$want\" in:"; cat "$t/out"; exit 1; }
	done
	echo "check_includes self-test: a good tree passes, each bad arrow is named"
	exit 0
fi
root=${1:-.}
cd "$root"
table=$(sed -n '/^<!-- modules -->$/,/^<!-- \/modules -->$/p' HACKING.md |
	awk -F'|' '/^\| *`[a-z_]+\/`/ {
		f = $2; gsub(/[` \/]/, "", f)
		a = $(NF-1); gsub(/[`\/]/, "", a); gsub(/—/, "", a)
		print f ":" a }')
[ -n "$table" ] || { echo "check_includes: no module table in HACKING.md" >&2; exit 1; }
modules=$(printf '%s\n' "$table" | cut -d: -f1)
bad=0
# Every folder holding C sources at the top level is in the table.
for d in */; do
	d=${d%/}
	case $d in build*|tests|tools|contrib|packaging|docs) continue ;; esac
	ls "$d"/*.[ch] >/dev/null 2>&1 || continue
	printf '%s\n' "$modules" | grep -qx "$d" ||
		{ echo "check_includes: folder $d/ is not in HACKING.md's module table"; bad=1; }
done
for m in $modules; do
	[ -d "$m" ] || { echo "check_includes: $m/ is in the table but not in the tree"; bad=1; continue; }
	allowed=" $m $(printf '%s\n' "$table" | grep "^$m:" | cut -d: -f2) "
	for f in "$m"/*.[ch]; do
		[ -e "$f" ] || continue
		# #include "dir/file.h" only: system headers and same-folder quotes pass.
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
			sed 's/^\([0-9]*\):.*"\([a-z_]*\)\/\([^"]*\)".*/\1 \2 \3/' |
			while read -r line to hdr; do
				case $allowed in *" $to "*) ;; *)
					echo "$f:$line: $m/ may not include $to/$hdr (not in HACKING.md's module table)"
					continue ;;
				esac
				case $hdr in *_int.h)
					[ "$to" = "$m" ] ||
						echo "$f:$line: $to/$hdr is private to $to/" ;;
				esac
			done
	done
done >"${TMPDIR:-/tmp}/check_includes.$$"
if [ -s "${TMPDIR:-/tmp}/check_includes.$$" ]; then
	cat "${TMPDIR:-/tmp}/check_includes.$$"; bad=1
fi
rm -f "${TMPDIR:-/tmp}/check_includes.$$"
[ $bad = 0 ] && echo "check_includes: every include is an arrow HACKING.md's table allows"
exit $bad
