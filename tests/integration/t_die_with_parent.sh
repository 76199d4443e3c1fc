#!/bin/bash
# --die-with-parent (as bubblewrap's): when halo-run's parent dies, the sandboxed
# command dies too; without it the command runs on. A parent that is gone before
# halo-run sets the death signal is caught, even one gone before halo-run started
# (halo-run finds itself adopted). Processes are found
# by a marker in their command line and ended by pid only.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
mkdir -p ws && cd ws || exit 1
command -v pgrep >/dev/null || { skip "die-with-parent" "no pgrep"; finish; exit; }

alive() { pgrep -f -- ": $1\$" >/dev/null; }
wait_for() { # MARK yes|no SECONDS: poll until alive (yes) or gone (no)
	local i
	for i in $(seq $(($3 * 10))); do
		if alive "$1"; then [ "$2" = yes ] && return 0; else [ "$2" = no ] && return 0; fi
		sleep 0.1
	done
	return 1
}
# parent MARK [OPTIONS]: a bash that runs halo-run in the background and waits; its
# pid in PARENT, halo-run's in "$TMPDIR/MARK.pid".
parent() {
	local m=$1
	shift
	bash -c '"$1" "${@:3}" -- sh -c "sleep 120; : $2" </dev/null >/dev/null 2>&1 & echo $! >"$TMPDIR/$2.pid"; wait' \
		_ "$HALO" "$m" "$@" &
	PARENT=$!
}
cleanup() { # MARK: end what is left, by pid
	local p
	p=$(cat "$TMPDIR/$1.pid" 2>/dev/null) && kill "$p" 2>/dev/null
	for p in $(pgrep -f -- ": $1\$"); do kill -9 "$p" 2>/dev/null; done
}

M1="dwp-$$-a"
parent "$M1" --die-with-parent
if wait_for "$M1" yes 10; then
	kill -9 "$PARENT"
	wait "$PARENT" 2>/dev/null
	wait_for "$M1" no 5
	expect "--die-with-parent: the parent killed (SIGKILL), the sandboxed command dies" 0 "$?"
	hp=$(cat "$TMPDIR/$M1.pid")
	st=$(awk '{print $3}' "/proc/$hp/stat" 2>/dev/null)
	expect "... and halo-run with it (gone, or a zombie its new parent has not reaped)" no "$([ -n "$st" ] && [ "$st" != Z ] && echo "yes ($st)" || echo no)"
else
	fail "--die-with-parent: the command started" "no process with the marker"
fi
cleanup "$M1"

M2="dwp-$$-b"
parent "$M2"
if wait_for "$M2" yes 10; then
	kill -9 "$PARENT"
	wait "$PARENT" 2>/dev/null
	sleep 1
	expect "without it, the command outlives the parent (the test can tell)" yes "$(alive "$M2" && echo yes || echo no)"
else
	fail "without --die-with-parent: the command started" "no process with the marker"
fi
cleanup "$M2"
wait_for "$M2" no 5

# A parent that is gone before halo-run even starts: a helper forks, its child waits
# (a pipe handshake) until the parent has exited and the child has been adopted, and
# only then execs halo-run --die-with-parent. halo-run never saw its parent; it must
# tell it was adopted and run nothing (bubblewrap runs the command on).
M3="dwp-$$-c"
O="$PWD/orphan"
rm -f "$O.err" "$O.ran" "$O.same"
if command -v python3 >/dev/null; then
	python3 - "$HALO" "$O" "$M3" <<'EOF2'
import os, sys, time
halo, base, mark = sys.argv[1:4]
r, w = os.pipe()
if os.fork() == 0:
    os.close(w)
    ppid = os.getppid()
    os.read(r, 1)  # EOF: the parent has exited
    for _ in range(500):  # ... and this process has been adopted
        if os.getppid() != ppid:
            break
        time.sleep(0.01)
    # A reaper that shares this process's session and group leaves nothing to tell
    # an orphan from a child by (runner/lineage.c): said, so the row is skipped.
    pp = os.getppid()
    if os.getsid(0) == os.getsid(pp) and os.getpgrp() == os.getpgid(pp):
        open(base + ".same", "w").write("pid %d, session %d, group %d" % (pp, os.getsid(0), os.getpgrp()))
    fd = os.open(base + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.execv(halo, [halo, "--die-with-parent", "--", "sh", "-c",
                    "echo ran >%s.ran; sleep 30; : %s" % (base, mark)])
os._exit(0)
EOF2
	for _ in $(seq 100); do
		{ [ -s "$O.err" ] || [ -e "$O.ran" ]; } && break
		sleep 0.1
	done
	sleep 0.5
	if [ -e "$O.same" ]; then
		skip "parent gone before halo-run started" "the orphan's reaper ($(cat "$O.same")) shares its session and process group: nothing tells it from a parent"
	else
		expect "parent gone before halo-run started: the command does not run" no \
			"$([ -e "$O.ran" ] && echo yes || echo no)"
		expect_match "parent gone before halo-run started: halo-run says why" \
			"^halo-run: --die-with-parent: the parent already exited" "$(cat "$O.err" 2>/dev/null)"
	fi
	cleanup "$M3"
else
	skip "parent gone before halo-run started" "python3 is needed for the fork handshake"
fi

OUT=$(timeout 30 "$HALO" --die-with-parent -- sh -c 'echo ran; exit 4' 2>&1 </dev/null)
expect "a live parent: the command runs as usual" "4:ran" "$?:$OUT"
finish
