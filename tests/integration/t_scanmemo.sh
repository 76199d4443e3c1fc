#!/bin/bash
# The launch scan asks the kernel about each name once (a memo of what resolving met,
# linux/scan_pin.c). What the scan itself makes must not be judged from that memo: the
# home as the workspace, with no ~/.local yet, has the floor's ~/.local/share entries
# find ~/.local missing; the index's place (~/.local/state/halo-run/index) is then made
# by the scan, and must still be masked whole (its records are what the next launch in
# this tree replays). Also: a floor entry under a directory the memo knows as missing,
# planted before the launch, is found and masked.
set -u
. "$IT/lib.sh"
H=$TMPDIR/home
mkdir -p "$H" && cd "$H" || exit 1
E="$TMPDIR/_stderr"
run_home() {
	OUT=$(cd "$H" && env -u XDG_STATE_HOME HOME="$H" timeout -k 2 60 "$HALO" -- sh -c "$1" \
		2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}

[ ! -e "$H/.local" ] || fail "fresh home" ".local exists already"
run_home 'echo x > ~/.local/state/halo-run/index/planted 2>/dev/null; ls ~/.local/state/halo-run/index 2>/dev/null; echo done'
expect "home as workspace, no ~/.local: the launch runs" "0 done" "$RC $OUT"
expect "the index place the scan made is masked: nothing planted on the host" no \
	"$([ -e "$H/.local/state/halo-run/index/planted" ] && echo yes || echo no)"
expect "the index place the scan made is masked: its listing hidden" "" \
	"$(printf '%s\n' "$OUT" | grep -v '^done$')"

# A credential under ~/.aws (absent at the previous launch): masked at this one.
mkdir -p "$H/.aws" && echo 'aws_secret_access_key=S3CRET' >"$H/.aws/credentials"
run_home 'cat ~/.aws/credentials 2>/dev/null; echo done'
expect "a floor file planted between launches is masked" "0 done" "$RC $OUT"
finish
