#!/bin/bash
# Resource limits: each one through --limit and through the policy's limits block,
# core dumps always 0, the command line tightening (never loosening) the policy, bad
# values refused (125) with a message naming the item, --timeout durations, memory
# limits that real runtimes (node, java, go, wasm) start under, and --dry-run naming
# the mechanism that holds each limit.
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
policy p_wall60.yaml 'limits: {wallSeconds: 60}'

# The wall-clock rows wait out their limit (1 or 2 s) doing nothing, and share nothing
# with the others: started here in the background, each checked at its place below.
declare -A bgp=()
bg_start() { # NAME ARGS...: halo-run ARGS in the background, bounded as sbx
	local n=$1
	shift
	(
		timeout -k 2 "${BOUND:-20}" "$HALO" "$@" >/dev/null 2>&1 </dev/null
		echo $? >"$TMPDIR/bg.$n.rc"
	) &
	bgp[$n]=$!
}
bg_rc() { # NAME: waits for it; sets RC
	wait "${bgp[$1]}"
	RC=$(cat "$TMPDIR/bg.$1.rc" 2>/dev/null)
}
bg_start wall-limit --limit wall=1 -- sleep 30
bg_start wall-policy --policy p_wall.yaml -- sleep 30
bg_start wall60-timeout1 --policy p_wall60.yaml --timeout 1 -- sleep 30
bg_start timeout1m-wall2 --timeout 1m --limit wall=2 -- sleep 30

# Which mechanism holds memory for this caller: the memory cgroup (root; a delegated
# user cgroup) or RLIMIT_DATA. The rows below expect what that mechanism does.
sbx --dry-run --limit mem=100M -- true
if grep -q "memory 100 MiB (.*cgroup" <<<"$OUT"; then MEMCG=yes; else MEMCG=no; fi
echo "# memory held by: $(grep -o 'memory 100 MiB ([^,;]*' <<<"$OUT")"
# Processes: a count of refused forks exists only with the pids cgroup.
sbx --dry-run --limit nproc=20 -- true
PLAN_LIMITS=$(grep 'processes 20' <<<"$OUT")

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
	# Bound 60 s: on a machine shared with other scripts (run.sh's pool) or other
	# users, two CPU seconds may take many more wall seconds.
	BOUND=60 sbx "${cpu[@]}" --events "$TMPDIR/ev-cpu" -- sh -c 'while :; do :; done'
	expect "cpu ($via): busy loop killed by SIGXCPU (152)" 152 "$RC"
	expect_match "cpu ($via): halo-run says the CPU-time limit was hit, naming limits.cpuSeconds" \
		"^halo-run: CPU-time limit hit: the command used its 1 s of CPU time and was killed \(SIGXCPU\) \(limits\.cpuSeconds; --limit cpu=" "$ERR"
	expect "cpu ($via): said once" 1 "$(grep -c 'limit hit' <<<"$ERR")"
	expect_match "cpu ($via): one limit event naming the key" '"limit":"cpu","policy_key":"limits.cpuSeconds"' \
		"$(tr -d ' \t' <"$TMPDIR/ev-cpu" 2>/dev/null)"
	rm -f "$TMPDIR/ev-cpu"
	BOUND=60 sbx "${cpu[@]}" -- sh -c 'trap "" XCPU; while :; do :; done'
	expect "cpu ($via): SIGXCPU ignored, then SIGKILL (137)" 137 "$RC"
	expect_match "cpu ($via): ... the hard limit, said" "^halo-run: CPU-time limit hit: .*SIGKILL.*limits\.cpuSeconds" "$ERR"

	# File size: SIGXFSZ by default; EFBIG when the signal is ignored, and the file
	# stops exactly at the limit.
	rm -f big
	sbx "${fsize[@]}" --events "$TMPDIR/ev-fsize" -- dd if=/dev/zero of=big bs=64K count=32
	expect "fsize ($via): dd past the limit killed by SIGXFSZ (153)" 153 "$RC"
	expect_match "fsize ($via): halo-run says the file-size limit was hit, naming limits.fileSizeMB" \
		"^halo-run: file-size limit hit: a write past 1024 KiB was refused .*\(limits\.fileSizeMB; --limit fsize=" "$ERR"
	expect "fsize ($via): said once" 1 "$(grep -c 'limit hit' <<<"$ERR")"
	expect "fsize ($via): one limit event naming the key" 1 "$(tr -d ' \t' <"$TMPDIR/ev-fsize" 2>/dev/null |
		grep -c '"limit":"fsize","policy_key":"limits.fileSizeMB"')"
	rm -f "$TMPDIR/ev-fsize"
	rm -f big
	sbx "${fsize[@]}" -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=big bs=64K count=32 2>&1; echo "rc=$?"'
	expect_match "fsize ($via): with SIGXFSZ ignored, write fails with EFBIG" "File too large" "$OUT"
	expect_match "fsize ($via): dd reports the failure" "rc=1" "$OUT"
	expect "fsize ($via): the file stops at 1 MiB" 1048576 "$(stat -c %s big 2>/dev/null)"
	sbx "${fsize[@]}" -- dd if=/dev/zero of=small bs=64K count=8
	expect "fsize ($via): a file under the limit is written" 0 "$RC"
	expect "fsize ($via): no limit line under it" "" "$(grep 'limit hit' <<<"$ERR")"
	rm -f big small

	# Memory: touching more than the limit is stopped (the cgroup's OOM killer, and
	# halo-run says so; or RLIMIT_DATA refusing the allocation); within it works.
	sbx "${mem[@]}" -- ./it_sup alloc 300
	if [ "$MEMCG" = yes ]; then
		expect "mem ($via): touching 300 MiB under 100 MiB is OOM-killed (137)" 137 "$RC"
		expect_match "mem ($via): halo-run says the memory limit was hit" \
			"^halo-run: memory limit hit: the kernel's OOM killer ended 1 process in the sandbox \(100 MiB, .*memory cgroup" "$ERR"
	else
		expect "mem ($via): malloc of 300 MiB under 100 MiB fails with ENOMEM" ENOMEM "$OUT"
	fi
	sbx "${mem[@]}" -- ./it_sup alloc 20
	expect "mem ($via): 20 MiB under 100 MiB works" ok "$OUT"
	expect "mem ($via): no memory-limit message when under it" "" "$(grep 'memory limit hit' <<<"$ERR")"
	sbx "${mem[@]}" -- python3 -c 'bytearray(300 << 20)'
	if [ "$MEMCG" = yes ]; then
		expect "mem ($via): python3 allocating 300 MiB is OOM-killed (137)" 137 "$RC"
		expect_match "mem ($via): ... and halo-run says so" "memory limit hit" "$ERR"
	else
		expect "mem ($via): python3 allocating 300 MiB exits 1" 1 "$RC"
		expect_match "mem ($via): python3 raises MemoryError" "MemoryError" "$ERR"
	fi

	# Processes: the fork bomb is bounded. The sandbox holds init and the helper, so
	# at most 18..19 children fit under 20 (cgroup: pids.max = 22 with init and the
	# creation broker's first thread; its later threads count against the 20).
	sbx "${nproc[@]}" --events "$TMPDIR/ev-nproc" -- ./it_sup forkmany 200
	n=$(echo "$OUT" | awk '{print $2}')
	expect "nproc ($via): fork fails with EAGAIN" EAGAIN "$(echo "$OUT" | awk '{print $3}')"
	expect "nproc ($via): fewer than 20 children fit" yes \
		"$([ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -lt 20 ] && echo yes || echo "no ($OUT)")"
	if grep -q 'processes.*pids cgroup' <<<"$PLAN_LIMITS"; then
		expect_match "nproc ($via): halo-run says the process limit was hit, naming limits.processes" \
			"^halo-run: process limit hit: the kernel refused [0-9]+ forks?: .*\(limits\.processes; --limit nproc=" "$ERR"
		expect "nproc ($via): one limit event naming the key" 1 "$(tr -d ' \t' <"$TMPDIR/ev-nproc" 2>/dev/null |
			grep -c '"limit":"processes","policy_key":"limits.processes"')"
	else
		skip "nproc ($via): the process-limit line" "no pids cgroup here: RLIMIT_NPROC keeps no count of refused forks"
	fi
	rm -f "$TMPDIR/ev-nproc"
	# Exactly the policy's count for the command, with the creation broker (the
	# workspace writable), without one (read-only: init alone on top), with none of
	# halo-run's tasks in the cgroup (mode off), and in a session (its spawner too).
	if grep -q 'processes.*pids cgroup' <<<"$PLAN_LIMITS"; then
		for mode in workspace-write read-only off; do
			policy "p_mode_$mode.yaml" "sandbox: {mode: $mode}"
			sbx "${nproc[@]}" --policy "p_mode_$mode.yaml" -- ./it_sup forkmany 200
			expect "nproc ($via, $mode): the command and exactly 19 children" 19 \
				"$(echo "$OUT" | awk '{print $2}')"
		done
		for mode in workspace-write read-only; do
			sbx "${nproc[@]}" --policy "p_mode_$mode.yaml" --session "lim-$via-$mode" \
				-- ./it_sup forkmany 200
			expect "nproc ($via, $mode, session): the call and exactly 19 children" 19 \
				"$(echo "$OUT" | awk '{print $2}')"
			"$HALO" session stop "lim-$via-$mode" >/dev/null 2>&1
		done
	else
		skip "nproc ($via): the exact count" "no pids cgroup here (RLIMIT_NPROC counts init and the broker too)"
	fi

	# Open files: fds 0-2 are open, so 29 more fit under 32.
	sbx "${nofile[@]}" --events "$TMPDIR/ev-nofile" -- ./it_sup openmany 100
	expect "nofile ($via): the 33rd descriptor fails with EMFILE" "opened 29 EMFILE" "$OUT"
	# Nothing in the kernel counts a refused descriptor (README, Limits): halo-run
	# claims no hit it cannot see, in a line or an event.
	expect "nofile ($via): no limit line claimed" "" "$(grep 'limit hit' <<<"$ERR")"
	expect "nofile ($via): no limit event claimed" 0 "$(grep -c '"limit"' "$TMPDIR/ev-nofile" 2>/dev/null)"
	rm -f "$TMPDIR/ev-nofile"

	# Wall clock: "${wall[@]}" -- sleep 30, started at the top.
	bg_rc "wall-$via"
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

# The command line tightens the policy's limits, never loosens them.
sbx --policy p_nofile.yaml --limit nofile=16 -- ./it_sup openmany 100
expect "--limit nofile=16 tightens the policy's openFiles: 32" "opened 13 EMFILE" "$OUT"
sbx --policy p_cpu.yaml --limit mem=100M -- sh -c 'ulimit -t; ulimit -d; ulimit -v'
expect "--limit of another item keeps the policy's cpu (memory: $([ $MEMCG = yes ] && echo cgroup || echo RLIMIT_DATA), address space never capped)" \
	"1 $([ $MEMCG = yes ] && echo unlimited || echo 102400) unlimited" "$(echo $OUT)"
loosen() { # WHAT POLICY ARGS...: the command line asks more than the policy: 125
	local what=$1 pol=$2
	shift 2
	sbx --policy "$pol" "$@" -- echo ran
	expect "$what: exit 125" 125 "$RC"
	expect "$what: nothing ran" "" "$OUT"
	expect_match "$what: the message names the limit and the policy's value" "$MSG" "$ERR"
}
ONLY="; the command line may only tighten limits"
MSG="^halo-run: --limit nofile=64 exceeds the policy's limits.openFiles \(32\)$ONLY\$"
loosen "--limit nofile=64 over openFiles: 32" p_nofile.yaml --limit nofile=64
MSG="^halo-run: --limit mem=8G exceeds the policy's limits.memoryMB \(100\)$ONLY\$"
loosen "--limit mem=8G over memoryMB: 100" p_mem.yaml --limit mem=8G
MSG="^halo-run: --limit cpu=1m exceeds the policy's limits.cpuSeconds \(1\)"
loosen "--limit cpu=1m over cpuSeconds: 1" p_cpu.yaml --limit cpu=1m
MSG="^halo-run: --timeout 1m exceeds the policy's limits.wallSeconds \(1\)$ONLY\$"
loosen "--timeout 1m over wallSeconds: 1" p_wall.yaml --timeout 1m
MSG="^halo-run: --limit wall=2 exceeds the policy's limits.wallSeconds \(1\)"
loosen "--limit wall=2 over wallSeconds: 1" p_wall.yaml --limit wall=2
sbx --policy p_wall.yaml --limit nproc=100000 -- echo ran
expect "a limit the policy leaves unset may be given any value" "0 ran" "$RC $OUT"
bg_rc wall60-timeout1 # --policy p_wall60.yaml --timeout 1 -- sleep 30
expect "--timeout 1 tightens wallSeconds: 60 (exit 124)" 124 "$RC"

# --timeout takes the durations of --limit wall=.
for t in 90 1m 1h30m 2m30s; do
	sbx --timeout "$t" -- echo ran
	expect "--timeout $t accepted" "0 ran" "$RC $OUT"
done
sbx --dry-run --timeout 1h30m -- true
expect_match "--timeout 1h30m: the plan says 5400 s" "wall clock 5400 s" "$OUT"
bg_rc timeout1m-wall2 # --timeout 1m --limit wall=2 -- sleep 30
expect "--timeout 1m with --limit wall=2: the shorter one holds (124)" 124 "$RC"
for t in 1x 0 -5 1h1h 1m30 " 1m" "1e3"; do
	sbx --timeout "$t" -- echo ran
	expect "--timeout '$t': exit 125, nothing ran" "125 " "$RC $OUT"
	expect_match "--timeout '$t': the message names it" "^halo-run: --timeout" "$ERR"
done

# Runtimes that reserve far more address space than they use start under a memory
# limit (RLIMIT_AS made them crash), and one that really uses more is stopped.
sbx --limit mem=1G -- node -e 'console.log(1)'
expect "node starts under mem=1G" "0 1" "$RC $OUT"
sbx --limit mem=1G -- node -e 'new WebAssembly.Memory({initial: 1}); console.log("wasm")'
expect "node: a wasm memory (a large guard reservation) under mem=1G" "0 wasm" "$RC $OUT"
sbx --limit mem=1G -- node -e 'const a = []; for (let i = 0; i < 200; i++) a.push(Buffer.alloc(1 << 20, 1)); console.log("ok")'
expect "node: 200 MiB really used under mem=1G works" "0 ok" "$RC $OUT"
BOUND=60 sbx --limit mem=200M -- node -e 'const a = []; for (let i = 0; i < 2000; i++) a.push(Buffer.alloc(1 << 20, 1)); console.log("survived")'
expect "node: touching 2 GiB under mem=200M is stopped" "stopped" \
	"$([ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ -z "$OUT" ] && echo stopped || echo "rc=$RC out=$OUT")"
if [ "$MEMCG" = yes ]; then
	expect_match "node over the limit: halo-run says the memory limit was hit" "memory limit hit" "$ERR"
else
	skip "node over the limit: halo-run says the memory limit was hit" "no memory cgroup for this user"
fi
if command -v java >/dev/null; then
	sbx --limit mem=1G -- java -version
	expect "java starts under mem=1G" 0 "$RC"
else
	skip "java starts under mem=1G" "no java"
fi
if command -v go >/dev/null; then
	mkdir -p gomem && printf '%s\n' 'package main' 'import ("fmt"; "os")' \
		'func main() { if len(os.Args) > 1 { var k [][]byte; for i := 0; i < 2000; i++ { b := make([]byte, 1<<20); for j := range b { b[j] = 1 }; k = append(k, b) }; fmt.Println("survived", len(k)); return }; fmt.Println("go ok") }' >gomem/main.go
	(cd gomem && GOCACHE="$TMPDIR/gocache" GOPATH="$TMPDIR/gopath" GO111MODULE=off GOFLAGS= timeout 120 go build -o ../gomem.bin main.go) 2>/dev/null
	if [ -x gomem.bin ]; then
		sbx --limit mem=1G -- ./gomem.bin
		expect "go: a Go binary starts under mem=1G" "0 go ok" "$RC $OUT"
		BOUND=60 sbx --limit mem=200M -- ./gomem.bin big
		expect "go: touching 2 GiB under mem=200M is stopped" "stopped" \
			"$([ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ -z "$OUT" ] && echo stopped || echo "rc=$RC out=$OUT")"
	else
		skip "the Go rows" "go build failed here"
	fi
else
	skip "the Go rows" "no go"
fi

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
	# + init and the creation broker's 4 threads (halo-run's, not the command's)
	expect "root: pids.max of that cgroup is 20 + init + the broker's first thread" 22 "$(echo "$OUT" | sed -n 2p)"
	own=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
	sbx --limit mem=100M -- sh -c 'grep -E "^[0-9]+:memory:" /proc/self/cgroup'
	expect_match "root: the sandbox runs in its own memory cgroup" "memory:.*halo-run" "$OUT"
	if [ -n "$own" ] && [ "$own" != / ]; then
		expect_match "root (v1): ... nested under the caller's own memory cgroup" "memory:$own/halo-run" "$OUT"
		memcg=$(sed -n 's/^[0-9]*:memory://p' <<<"$OUT")
		expect "root: the memory cgroup is removed after the run" gone \
			"$([ -n "$memcg" ] && [ ! -e "/sys/fs/cgroup/memory$memcg" ] && echo gone || echo "left: $memcg")"
	fi
	expect "root: the pids cgroup is removed after the run" gone \
		"$([ -n "$cg" ] && [ ! -e "/sys/fs/cgroup/pids$cg" ] && [ ! -e "/sys/fs/cgroup$cg" ] && echo gone || echo "left: $cg")"
else
	expect_match "--dry-run (user): processes held by RLIMIT_NPROC" "processes 20 \(setrlimit RLIMIT_NPROC" "$OUT"
	if [ "$MEMCG" = yes ]; then
		expect_match "--dry-run (user): memory in the delegated cgroup" "memory 512 MiB \(delegated user cgroup" "$OUT"
	else
		expect_match "--dry-run (user, no delegated cgroup): memory held by RLIMIT_DATA" "memory 512 MiB \(setrlimit RLIMIT_DATA" "$OUT"
	fi
	if grep -q "processes 20.*cgroup" <<<"$OUT"; then
		fail "--dry-run (user): no cgroup claimed" "$(grep 'processes 20' <<<"$OUT")"
	else
		ok "--dry-run (user): no cgroup claimed"
	fi
fi


# CPUs: init starts on a CPU of its own (linux/cpus.c) and gives the caller's set back
# before the command: the command may run wherever its caller may, no narrower.
mine=$(grep Cpus_allowed_list /proc/self/status)
if [ "$(nproc)" -lt 2 ]; then
	skip "the command runs on the caller's CPUs" "one CPU here: init is never moved"
else
	sbx -- grep Cpus_allowed_list /proc/self/status
	expect "the command runs on the caller's CPUs" "$mine" "$OUT"
	sbx --limit nproc=50 -- sh -c 'grep Cpus_allowed_list /proc/self/status'
	expect "the command runs on the caller's CPUs (process limit: forked spawn)" "$mine" "$OUT"
	# the first two CPUs this caller may use (review 26: not 0 and 1 in every cpuset)
	read -r c1 c2 < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[1])')
	OUT=$(timeout -k 2 20 taskset -c "$c2" "$HALO" -- grep Cpus_allowed_list /proc/self/status 2>"$E" </dev/null)
	expect "a caller held to one CPU keeps the command there" "Cpus_allowed_list:	$c2" "$OUT"
	OUT=$(timeout -k 2 20 taskset -c "$c1,$c2" "$HALO" -- sh -c 'grep Cpus_allowed_list /proc/self/status; sleep 0.2 & grep Cpus_allowed_list /proc/$!/status' 2>"$E" </dev/null)
	want=$(taskset -c "$c1,$c2" grep Cpus_allowed_list /proc/self/status)
	expect "a caller held to two CPUs: the command and its children keep both" "$want
$want" "$OUT"
fi

finish
