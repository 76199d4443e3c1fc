#!/bin/bash
# The session directory (session/session.c, runner_session_place): made 0700 when
# missing, reused as it is at the next launch (looked at first, made only when
# missing), and refused when it is not this user's private directory: group- or
# world-accessible, or a symbolic link (even to a private directory).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
xdg="$TMPDIR/xdg"
mkdir -m 700 "$xdg"
list() { # sets RC ERR
	XDG_RUNTIME_DIR="$xdg" timeout -k 2 30 "$HALO" session list >/dev/null 2>"$E" </dev/null
	RC=$?
	ERR=$(cat "$E")
}

list
expect "missing: session list works" 0 "$RC"
expect "missing: made, mode 700" 700 "$(stat -c %a "$xdg/halo-run" 2>&1)"
list
expect "there: reused" "0 700" "$RC $(stat -c %a "$xdg/halo-run" 2>&1)"

chmod 755 "$xdg/halo-run"
list
expect "mode 755: refused (125)" 125 "$RC"
expect_match "mode 755: said why" "is not a private directory of this user" "$ERR"

rmdir "$xdg/halo-run"
mkdir -m 700 "$TMPDIR/elsewhere"
ln -s "$TMPDIR/elsewhere" "$xdg/halo-run"
list
expect "a symbolic link to a private directory: refused (125)" 125 "$RC"
expect_match "a symbolic link: said why" "is not a private directory of this user" "$ERR"
finish
