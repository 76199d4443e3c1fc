#!/bin/bash
# Resource limits: each one through --limit and through the policy's limits block,
# core dumps always 0, --limit overriding the policy, bad values refused (125) with a
# message naming the item, and --dry-run naming the mechanism that holds each limit.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1

cp "$HELPERS/it_sup" ./it_sup 2>/dev/null || true
E="$TMPDIR/_stderr"

sbx() { # ARGS...: bounded halo-run, stdin /dev/null; sets OUT ERR RC
	OUT=$(timeout -k 2 "${BOUND:-20}" "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
policy() { # NAME YAML: write a policy file
	printf '%s\n' "$2" >"$1"
}

# Each limit is exercised twice: --limit K=V and a policy file. ROWS: label, --limit
# item, policy limits block.
policy p_cpu.yaml 'limits: {cpuSeconds: 1}'
policy p_fsize.yaml 'limits: {fileSizeMB: 1}'
policy p_mem.yaml 'limits: {memoryMB: 100}'
policy p_nproc.yaml 'limits: {processes: 20}'
policy p_nofile.yaml 'limits: {openFiles: 32}'
policy p_wall.yaml 'limits: {wallSeconds: 1}'

for via in limit policy; do
	case $via in
	limit) cpu=(--limit cpu=1) fsize=(--limit fsize=1M) mem=(--limit mem=100M)
		nproc=(--limit nproc=20) nofile=(--limit nofile=32) wall=(--limit wall=1) ;;
	policy) cpu=(--policy p_cpu.yaml) fsize=(--policy p_fsize.yaml) mem=(--policy p_mem.yaml)
		nproc=(--policy p_nproc.yaml) nofile=(--policy p_nofile.yaml) wall=(--policy p_wall.yaml) ;;
	esac

	# CPU: SIGXCPU at the soft limit; a command that ignores it gets SIGKILL.
	# (The 20 s bound of sbx would show as 124: CPU seconds, not wall seconds, are
	# counted, so a loaded machine may take a few more wall seconds.)
	sbx "${cpu[@]}" -- sh -c 'while :; do :; done'
	expect "cpu ($via): busy loop killed by SIGXCPU (152)" 152 "$RC"
	sbx "${cpu[@]}" -- sh -c 'trap "" XCPU; while :; do :; done'
	expect "cpu ($via): SIGXCPU ignored, then SIGKILL (137)" 137 "$RC"

	# File size: SIGXFSZ by default; EFBIG when the signal is ignored, and the file
	# stops exactly at the limit.
	rm -f big
	sbx "${fsize[@]}" -- dd if=/dev/zero of=big bs=64K count=32
	expect "fsize ($via): dd past the limit killed by SIGXFSZ (153)" 153 "$RC"
	rm -f big
	sbx "${fsize[@]}" -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=big bs=64K count=32 2>&1; echo "rc=$?"'
	expect_match "fsize ($via): with SIGXFSZ ignored, write fails with EFBIG" "File too large" "$OUT"
	expect_match "fsize ($via): dd reports the failure" "rc=1" "$OUT"
	expect "fsize ($via): the file stops at 1 MiB" 1048576 "$(stat -c %s big 2>/dev/null)"
	sbx "${fsize[@]}" -- dd if=/dev/zero of=small bs=64K count=8
	expect "fsize ($via): a file under the limit is written" 0 "$RC"
	rm -f big small

	# Memory (address space): allocation beyond fails; within works.
	sbx "${mem[@]}" -- ./it_sup alloc 300
	expect "mem ($via): malloc of 300 MiB under 100 MiB fails with ENOMEM" ENOMEM "$OUT"
	sbx "${mem[@]}" -- ./it_sup alloc 20
	expect "mem ($via): 20 MiB under 100 MiB works" ok "$OUT"
	sbx "${mem[@]}" -- python3 -c 'bytearray(300 << 20)'
	expect "mem ($via): python3 allocating 300 MiB exits 1" 1 "$RC"
	expect_match "mem ($via): python3 raises MemoryError" "MemoryError" "$ERR"

	# Processes: the fork bomb is bounded. The sandbox holds init and the helper, so
	# at most 18..19 children fit under 20 (cgroup: pids.max = 21 with init).
	sbx "${nproc[@]}" -- ./it_sup forkmany 200
	n=$(echo "$OUT" | awk '{print $2}')
	expect "nproc ($via): fork fails with EAGAIN" EAGAIN "$(echo "$OUT" | awk '{print $3}')"
	expect "nproc ($via): fewer than 20 children fit" yes \
		"$([ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -lt 20 ] && echo yes || echo "no ($OUT)")"

	# Open files: fds 0-2 are open, so 29 more fit under 32.
	sbx "${nofile[@]}" -- ./it_sup openmany 100
	expect "nofile ($via): the 33rd descriptor fails with EMFILE" "opened 29 EMFILE" "$OUT"

	# Wall clock.
	sbx "${wall[@]}" -- sleep 30
	expect "wall ($via): exit 124" 124 "$RC"
done

# Core dumps are always off, and the command cannot turn them back on.
sbx -- sh -c 'ulimit -c'
expect "core dumps: ulimit -c is 0" 0 "$OUT"
sbx -- sh -c 'ulimit -H -c'
expect "core dumps: hard limit is 0" 0 "$OUT"
sbx -- sh -c 'ulimit -c unlimited 2>/dev/null && echo raised || echo refused'
expect "core dumps: cannot be raised inside" refused "$OUT"

# No limit asked: the host's limits are kept (the helper's nofile is not lowered).
sbx -- sh -c 'ulimit -n'
expect "no --limit: open files keep the host's limit" "$(ulimit -n)" "$OUT"

# --limit overrides the policy.
sbx --policy p_nofile.yaml --limit nofile=64 -- ./it_sup openmany 100
expect "--limit nofile=64 overrides the policy's openFiles: 32" "opened 61 EMFILE" "$OUT"
sbx --policy p_cpu.yaml --limit mem=100M -- sh -c 'ulimit -t; ulimit -v'
expect "--limit of another item keeps the policy's cpu" "1 102400" "$(echo $OUT)"

# Bad --limit values: 125, nothing run, the message names the item.
bad_limit() { # SPEC REGEX
	sbx --limit "$1" -- echo ran
	expect "--limit $1: exit 125" 125 "$RC"
	expect "--limit $1: nothing ran" "" "$OUT"
	expect_match "--limit $1: message names the item" "$2" "$ERR"
}
bad_limit cpu=abc 'cpu=abc'
bad_limit mem=-5 'mem'
bad_limit bogus=1 "unknown key 'bogus'"
bad_limit nofile= 'nofile'
bad_limit fsize=10Q 'fsize=10Q'
bad_limit nproc=0 'nproc=0'
bad_limit cpu=1,cpu=2 'cpu given twice'
bad_limit wall=1x 'wall'

# Bad policy limits: 125, naming the field.
policy p_bad1.yaml 'limits: {cpuSeconds: -1}'
sbx --policy p_bad1.yaml -- echo ran
expect "policy cpuSeconds: -1: exit 125" 125 "$RC"
expect_match "policy cpuSeconds: -1: message names the field" "cpuSeconds" "$ERR"
policy p_bad2.yaml 'limits: {cpuSecs: 1}'
sbx --policy p_bad2.yaml -- echo ran
expect "policy unknown limit key: exit 125" 125 "$RC"
expect_match "policy unknown limit key: message names it" "cpuSecs" "$ERR"

# --dry-run says which mechanism holds processes and memory. As root RLIMIT_NPROC
# does not hold host uid 0, so the pids cgroup must.
sbx --dry-run --limit nproc=20,mem=512M -- true
expect "--dry-run with limits: exit 0" 0 "$RC"
expect_match "--dry-run: core dumps 0" "core dumps 0" "$OUT"
expect_match "--dry-run: processes 20 named" "processes 20" "$OUT"
if [ "$AS" = root ]; then
	expect_match "--dry-run (root): processes held by the pids cgroup" "processes 20.*pids cgroup" "$OUT"
	expect_match "--dry-run (root): memory also held by the memory cgroup" "memory 512 MiB.*memory cgroup" "$OUT"
	# And the launch really puts the sandbox there.
	# cgroup v1 (this machine: a pids hierarchy) or v2 (the unified "0::" line).
	sbx --limit nproc=20 -- sh -c 'cg=$(sed -n "s/^[0-9]*:pids://p" /proc/self/cgroup)
		d=/sys/fs/cgroup/pids; [ -n "$cg" ] || { cg=$(sed -n "s/^0:://p" /proc/self/cgroup); d=/sys/fs/cgroup; }
		echo "$cg"; cat "$d$cg/pids.max" 2>/dev/null || echo unreadable'
	cg=$(echo "$OUT" | head -1)
	expect_match "root: the sandbox runs in its own pids cgroup" "halo-run" "$cg"
	expect "root: pids.max of that cgroup is 20 + init" 21 "$(echo "$OUT" | sed -n 2p)"
	sbx --limit mem=100M -- sh -c 'grep -E "^[0-9]+:memory:" /proc/self/cgroup'
	expect_match "root: the sandbox runs in its own memory cgroup" "memory:.*halo-run" "$OUT"
	expect "root: the pids cgroup is removed after the run" gone \
		"$([ -n "$cg" ] && [ ! -e "/sys/fs/cgroup/pids$cg" ] && [ ! -e "/sys/fs/cgroup$cg" ] && echo gone || echo "left: $cg")"
else
	expect_match "--dry-run (user): processes held by RLIMIT_NPROC" "processes 20 \(setrlimit RLIMIT_NPROC" "$OUT"
	if grep -q "processes 20.*cgroup" <<<"$OUT"; then
		fail "--dry-run (user): no cgroup claimed" "$(grep 'processes 20' <<<"$OUT")"
	else
		ok "--dry-run (user): no cgroup claimed"
	fi
fi

finish
