#!/bin/bash
# halo-run's own state (issue 24): the index watchers' sockets and index directories
# of any home are masked like the rest but are not the user's findings: --dry-run does
# not list them, and a watcher that another launch starts in a new directory never
# refuses the session's next call. An index place made in the session's workspace
# (another HOME inside it) ends the session, naming it (reviews 17 and 18: a command
# can make one too, and what goes into it is not looked at).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
S="own$$"
trap '"$HALO" session stop "$S" >/dev/null 2>&1' EXIT
WS="$TMPDIR/ws"
mkdir -p "$WS/other-home/new-dir" "$TMPDIR/home1"

# ------------------------------ a launch under another HOME does not break a session
call() { # DIR HOME ARGS...
	local dir=$1 home=$2
	shift 2
	OUT=$(cd "$dir" && HOME="$home" timeout -k 2 30 "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
call "$WS" "$TMPDIR/home1" --session "$S" -- echo one
expect "the session starts" "0:one" "$RC:$OUT"
# (HALO_RUN_INDEX_WATCH=1: a watcher even for a tree this small, which needs none.)
HALO_RUN_INDEX_WATCH=1 call "$WS/other-home/new-dir" "$WS/other-home" -- true
expect "a launch in a new directory under another HOME (in the session's workspace)" 0 "$RC"
sleep 0.3
compgen -G "$WS/other-home/.local/state/halo-run/index/*.sock" >/dev/null ||
	skip "the other launch's watcher" "no index watcher started for it"
call "$WS" "$TMPDIR/home1" --session "$S" -- echo two
expect "the session's next call: refused" "125:" "$RC:$OUT"
expect_match "... naming the new index place, the session ended" "other-home/.local/state/halo-run/index, another halo-run index place.*the session ends" "$ERR"
call "$WS" "$TMPDIR/home1" --session "$S" -- sh -c 'echo again; ls other-home/.local/state/halo-run/index 2>&1 | grep -c sock; true'
expect "... the call after starts it anew, the place masked whole" "0:again
0" "$RC:$OUT"
# A host service that does appear after the start is masked in the session (review 9
# S4; it was refused until removed).
if command -v python3 >/dev/null; then
	python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(20)' \
		"$WS/svc.sock" &
	SVC=$!
	for _ in $(seq 1 50); do [ -S "$WS/svc.sock" ] && break; sleep 0.1; done
	call "$WS" "$TMPDIR/home1" --session "$S" -- sh -c 'echo three; python3 -c "import socket; socket.socket(socket.AF_UNIX).connect(\"svc.sock\")" 2>/dev/null || echo masked'
	expect "a host service's socket that appeared since is masked" "0:three
masked" "$RC:$OUT"
	kill "$SVC" 2>/dev/null
	wait "$SVC" 2>/dev/null
else
	skip "a new host socket still refused" "no python3"
fi
# Review 18: this launch's own index place, masked in a home workspace's session, removed
# and made again on the host (the next launch does): the lost mask ends the session (an
# exemption for other launches' places had let the session read and write it).
H2="$TMPDIR/home2"
mkdir -p "$H2"
call "$H2" "$H2" --session "${S}h" -- sh -c 'ls -ld .local/state/halo-run/index >/dev/null 2>&1 && echo there'
if [ "$OUT" = there ] && [ -d "$H2/.local/state/halo-run/index" ]; then
	rm -rf "$H2/.local/state/halo-run/index" && mkdir "$H2/.local/state/halo-run/index"
	call "$H2" "$H2" --session "${S}h" -- sh -c 'echo x > .local/state/halo-run/index/forged.idx && echo wrote'
	expect "own index place re-made on the host: the session's call is refused" "125:" "$RC:$OUT"
	expect_match "... the lost mount named" "mounts? (is|are) gone or moved" "$ERR"
	expect "... nothing written there" absent \
		"$([ -e "$H2/.local/state/halo-run/index/forged.idx" ] && echo present || echo absent)"
else
	skip "own index place re-made" "no index place in the home after the first call ($OUT)"
fi
(cd "$H2" && HOME=$H2 "$HALO" session stop "${S}h" >/dev/null 2>&1)

# ------------------------- this user's own index place: one mask, whatever it holds
# Its watchers' sockets are not probed one by one (a connect each, at every launch):
# the place that holds any is masked whole, so none is reachable inside. The home is
# under /var/tmp: shown inside as the host has it (under /tmp it would be out of sight).
VH=$(mktemp -d /var/tmp/halo-own.XXXXXX)
trap '"$HALO" session stop "$S" >/dev/null 2>&1; rm -rf "$VH"' EXIT
mkdir -p "$TMPDIR/ws-own"
(cd "$TMPDIR/ws-own" && HOME="$VH" HALO_RUN_INDEX_WATCH=1 timeout -k 2 30 "$HALO" -- true </dev/null >/dev/null 2>&1)
sleep 0.3
SOCK=$(compgen -G "$VH/.local/state/halo-run/index/*.sock" | head -1)
probe='import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("reached")
except OSError as e:
    print("unreachable")'
if [ -n "$SOCK" ] && command -v python3 >/dev/null &&
	[ "$(python3 -c "$probe" "$SOCK")" = reached ]; then
	call "$TMPDIR/ws-own" "$VH" -- python3 -c "$probe" "$SOCK"
	expect "a live watcher's socket in the caller's index place is unreachable inside" "0:unreachable" "$RC:$OUT"
	PLAN=$(cd "$TMPDIR/ws-own" && HOME="$VH" timeout -k 2 30 "$HALO" --dry-run --json -- true 2>/dev/null </dev/null)
	expect "... the place is one mask, not one per socket" "0" \
		"$(grep -c "$VH/\.local/state/halo-run/index/[^\"]*\.sock" <<<"$PLAN")"
	expect_match "... and the place itself is masked" "${VH//./\\.}/\\.local/state/halo-run/index\"" "$PLAN"
else
	skip "the caller's index place masked whole" "no live index watcher to probe (or no python3)"
fi
# ------------------------------------------- --dry-run lists no halo-run-internal path
# The home as the workspace: its index place is masked (shielded), and the other
# launch's watcher socket (above) is bound in it; neither is a path of the user's.
(cd "$WS" && HOME="$WS" HALO_RUN_INDEX_WATCH=1 timeout -k 2 30 "$HALO" -- true </dev/null >/dev/null 2>&1)
sleep 0.3
compgen -G "$WS/other-home/.local/state/halo-run/index/*.sock" >/dev/null || skip "a watcher socket to hide" "no index watcher started here"
PLAN=$(cd "$WS" && HOME="$WS" timeout -k 2 30 "$HALO" --dry-run -- true 2>/dev/null </dev/null)
expect_match "--dry-run printed a plan" "^masked protected paths" "$PLAN"
expect "--dry-run lists no index socket or directory of halo-run's" "" \
	"$(grep -E '/halo-run/index|/\.local/state/halo-run$|/\.cache/halo-run$' <<<"$PLAN" | head -3)"
expect_match "... and says they are there, in one line" "of halo-run's own: its index and session state" "$PLAN"
JSON=$(cd "$WS" && HOME="$WS" timeout -k 2 30 "$HALO" --dry-run --json -- true 2>/dev/null </dev/null)
expect_match "--dry-run --json keeps them, origin halo-run" '"origin":[[:space:]]*"halo-run"' "$JSON"

finish
