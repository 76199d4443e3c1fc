#!/bin/bash
# A session's call is judged by its supervisor's walk for protected files
# (session/sup_walk.c): one that starts after the call connected, never an earlier
# one, while the call builds the rest. Here every walk is slow (20,000 entries, no
# index: HALO_RUN_INDEX=0), so the hellos wait for theirs and the run each call sent
# along waits with it: calls still run, concurrent ones too, and a protected file
# made just before a call, even while another call's walk runs, is refused.
# Root and unprivileged.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
S="sw$$"
WS=$(mktemp -d /var/tmp/halo-sessw.XXXXXX) || exit 1
cleanup() {
	(cd "$WS" && "$HALO" session stop "$S" >/dev/null 2>&1)
	rm -rf "$WS"
}
trap cleanup EXIT

if ! "$HALO" -- true 2>/dev/null; then
	skip "session walk" "this machine cannot build the sandbox for $AS"
	exit 0
fi
P="$TMPDIR/protect.json"
printf '{"sandbox": {"protectedPaths": [".env*"]}}\n' >"$P"
python3 - "$WS" <<'PY' || exit 1
import os, sys
root = sys.argv[1]
src = os.path.join(root, ".src")
open(src, "w").close()
for d in range(400):
    p = os.path.join(root, "node_modules", f"p{d % 40:02d}", f"d{d:03d}")
    os.makedirs(p, exist_ok=True)
    for f in range(50):
        os.link(src, os.path.join(p, f"f{f:02d}.js"))
PY

call() {
	OUT=$(cd "$WS" && HALO_RUN_INDEX=0 timeout -k 2 30 "$HALO" --session "$S" --policy "$P" \
		"$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}

call -- echo first
expect "the first call starts the session" "0:first" "$RC:$OUT"
call -- echo second
expect "a call whose hello waits for the walk runs" "0:second" "$RC:$OUT"

# Four at once: each hello waits (one walk may answer several), each run follows.
for i in 1 2 3 4; do
	(cd "$WS" && HALO_RUN_INDEX=0 timeout -k 2 30 "$HALO" --session "$S" --policy "$P" \
		-- sh -c "echo c$i" >"$TMPDIR/par.$i" 2>&1 </dev/null
	echo $? >>"$TMPDIR/par.$i") &
done
wait
got=$(cat "$TMPDIR"/par.{1,2,3,4} | tr '\n' ' ')
expect "four concurrent calls all run, each its own command" "c1 0 c2 0 c3 0 c4 0 " "$got"

# A protected file made right before a call: found by the call's own walk.
for i in 1 2 3; do
	call -- true
	printf 'SECRET%s\n' "$i" >"$WS/.env.r$i"
	call -- cat ".env.r$i"
	expect "round $i: a file made just before the call: refused" 125 "$RC"
	expect_match "round $i: ... naming it" "protected file appeared.*\.env\.r$i" "$ERR"
	if grep -q "SECRET$i" <<<"$OUT"; then fail "round $i: unread" "read"; else ok "round $i: unread"; fi
	rm -f "$WS/.env.r$i"
done

# ... and while another call's walk runs: that walk started before this call
# connected, so it does not answer this call; the next one does.
call -- true
(cd "$WS" && HALO_RUN_INDEX=0 timeout -k 2 30 "$HALO" --session "$S" --policy "$P" \
	-- true >/dev/null 2>&1 </dev/null) &
printf 'LATE\n' >"$WS/.env.mid"
call -- cat .env.mid
wait
expect "a file made while another call's walk runs: refused" 125 "$RC"
if grep -q LATE <<<"$OUT"; then fail "... unread" "read"; else ok "... unread"; fi
rm -f "$WS/.env.mid"

# A call that goes away while its hello waits costs the session nothing.
call -- true
(cd "$WS" && HALO_RUN_INDEX=0 timeout -s KILL 0.005 "$HALO" --session "$S" --policy "$P" \
	-- true >/dev/null 2>&1 </dev/null)
call -- echo after
expect "a call killed while its hello waited: the next runs" "0:after" "$RC:$OUT"
finish
