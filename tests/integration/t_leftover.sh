#!/bin/bash
# Nothing left behind (issue 25, item 3): `verify`, `doctor` and `check` leave no
# process (no index watcher, no sandbox, no session) and no index; verify removes the
# tool caches of the workspaces it made. Each runs in a pid namespace of its own, so
# that the process table after it holds what it left and nothing of other scripts'
# (run.sh runs scripts in parallel) or other users'.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
if [ "$AS" = root ]; then PIDNS=(unshare --pid --fork --mount-proc); else
	PIDNS=(unshare --user --map-current-user --pid --fork --mount-proc); fi
if ! timeout 10 "${PIDNS[@]}" true 2>/dev/null; then
	skip "verify, doctor, check leave nothing" "no pid namespace for $AS here (${PIDNS[*]})"
	finish
	exit
fi
# in_ns CMD...: run it in a fresh pid namespace, then list what is still running
# there (the shell that lists, and ps, aside), after a moment for stragglers.
in_ns() {
	timeout -k 5 300 "${PIDNS[@]}" bash -c '
		"$@" >"$TMPDIR/out" 2>&1; echo $? >"$TMPDIR/rc"
		sleep 0.5
		ps -e -o pid=,stat=,args= >"$TMPDIR/ps"
		awk -v me=$$ '"'"'$1 != me && $3 != "ps" && $2 !~ /^Z/'"'"' "$TMPDIR/ps"
	' sh "$@" </dev/null
}
index_files() { find "$HOME/.local/state/halo-run" -type f 2>/dev/null; }
cache_dirs() { find "$HOME/.cache/halo-run/caches" -mindepth 1 -maxdepth 1 2>/dev/null; }

for c in "verify" "doctor" "check example.test"; do
	# shellcheck disable=SC2086
	LEFT=$(in_ns "$HALO" $c)
	RC=$(cat "$TMPDIR/rc" 2>/dev/null)
	expect "$c: ran (exit 0 or 1)" yes "$(case $RC in 0 | 1) echo yes ;; *) echo "no ($RC: $(head -c 300 "$TMPDIR/out"))" ;; esac)"
	expect "$c: no process left behind" "" "$LEFT"
	expect "$c: no index left behind" "" "$(index_files)"
	expect "$c: no tool caches left behind" "" "$(cache_dirs)"
done
# A workspace with caches of its own from before keeps them.
mkdir -p ws && (cd ws && timeout 30 "$HALO" -- true 2>/dev/null </dev/null)
before=$(cache_dirs)
(cd ws && in_ns "$HALO" verify >/dev/null)
expect "verify in a workspace with caches: they are kept, nothing added" "$before" "$(cache_dirs)"
finish
