#!/bin/bash
# Fail closed: where user namespaces cannot be created, halo-run refuses (125) with an
# actionable message, unless the policy says sandbox.failIfUnavailable: false; then
# the command runs with Landlock, seccomp, limits and a clean environment, and stderr
# says what is not enforced.
#
# Two ways to take user namespaces away from halo-run:
#  - sysctl: inside a test user namespace (unshare -U -r, allowed for root and for
#    the unprivileged user here), user.max_user_namespaces=0 applies to that
#    namespace's descendants: clone(CLONE_NEWUSER) fails with ENOSPC;
#  - seccomp (it_nouserns): a container runtime's profile, EPERM.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
cp "$HELPERS/it_sup" ./it_sup 2>/dev/null || true
E="$TMPDIR/_stderr"

# The prefixes that take user namespaces away from the command they run:
# sysctl: a user namespace whose max_user_namespaces is 0; seccomp: it_nouserns.
pre_sysctl=(unshare --user --map-root-user sh -c
	'echo 0 >/proc/sys/user/max_user_namespaces || exit 99; exec "$@"' sh)
pre_seccomp=("$HELPERS/it_nouserns")
# run_in WAY ARGS...: halo-run ARGS under WAY, bounded; sets OUT ERR RC
run_in() {
	local -n pre="pre_$1"
	shift
	OUT=$(timeout -k 2 20 "${pre[@]}" "$HALO" "$@" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}

printf 'sandbox: {failIfUnavailable: false}\n' >degrade.yaml
printf 'sandbox: {failIfUnavailable: true}\n' >strict.yaml

ways=()
if timeout 10 "${pre_sysctl[@]}" true 2>/dev/null; then
	ways+=(sysctl)
	# The mechanism itself, so a pass below means what it says.
	expect "sysctl: unshare -U fails inside the test namespace" fails \
		"$(timeout 10 "${pre_sysctl[@]}" unshare -U true 2>/dev/null && echo works || echo fails)"
else
	skip "the sysctl way" "user.max_user_namespaces cannot be set in a test user namespace (unshare -U -r or the write failed)"
fi
if [ -x "$HELPERS/it_nouserns" ]; then
	ways+=(seccomp)
	expect "seccomp: unshare -U fails under it_nouserns" fails \
		"$(timeout 10 "${pre_seccomp[@]}" unshare -U true 2>/dev/null && echo works || echo fails)"
else
	fail "seccomp way" "helper it_nouserns missing"
fi

for way in "${ways[@]}"; do
	w=$way
	# ---------------------------------------------------------------- refuse
	for pol in "" "--policy strict.yaml"; do
		label="$w${pol:+, failIfUnavailable: true}"
		# shellcheck disable=SC2086
		run_in "$way" $pol -- echo ran
		expect "$label: exit 125" 125 "$RC"
		expect "$label: the command did not run" "" "$OUT"
		expect_match "$label: message names max_user_namespaces" "max_user_namespaces" "$ERR"
		expect_match "$label: message names AppArmor" "AppArmor" "$ERR"
		expect_match "$label: message names failIfUnavailable" "failIfUnavailable" "$ERR"
	done
	run_in "$way" --dry-run -- true
	expect "$w: --dry-run still prints the plan" 0 "$RC"
	expect_match "$w: --dry-run says the launch would be refused" "refused|NOTHING" "$OUT"
	run_in "$way" --dry-run --policy degrade.yaml -- true
	expect_match "$w: --dry-run (failIfUnavailable: false) lists namespaces as not enforced" \
		"namespaces.*(unavailable|failIfUnavailable)" "$OUT"

	# ---------------------------------------------------------------- degrade
	run_in "$way" --policy degrade.yaml -- echo ran
	expect "$w, failIfUnavailable: false: the command runs" "0:ran" "$RC:$OUT"
	expect_match "$w, failIfUnavailable: false: stderr says what is not enforced" "NOT enforced" "$ERR"
	expect_match "$w, failIfUnavailable: false: ... naming the namespaces and masks" \
		"masking.*(namespace|isolation)|namespace.*mask" "$ERR"
	# A launch the scan refuses is refused as such, without first saying it runs
	# with the weaker layers (an allowRead carve-out that is a symlink into ~/.ssh).
	mkdir -p carveh/.ssh carveh/.aws && : >carveh/.ssh/id_rsa &&
		ln -sfn ../.ssh/id_rsa carveh/.aws/config
	printf 'sandbox: {failIfUnavailable: false, allowRead: ["~/.aws/config"]}\n' >degrade_carve.yaml
	HOME="$TMPDIR/carveh" run_in "$way" --policy degrade_carve.yaml -- echo ran
	expect "$w, degraded, a scan refusal: exit 125, nothing ran" "125:" "$RC:$OUT"
	expect_match "$w, degraded, a scan refusal: ... says why" "refusing to launch" "$ERR"
	expect "$w, degraded, a scan refusal: ... and not that it runs degraded" "" \
		"$(grep -E 'running with|NOT enforced' <<<"$ERR")"
	run_in "$way" --quiet --policy degrade.yaml -- echo ran
	expect "$w, degraded, --quiet: runs" "0:ran" "$RC:$OUT"

	run_in "$way" --policy degrade.yaml -- sh -c 'exit 42'
	expect "$w, degraded: exit status passes (42)" 42 "$RC"
	local_pre="pre_$way[@]"
	OUT=$(timeout -k 2 20 "${!local_pre}" env --ignore-signal=CHLD "$HALO" --policy degrade.yaml -- sh -c 'exit 42' 2>/dev/null </dev/null)
	expect "$w, degraded: caller ignoring SIGCHLD: exit 42 still exact" 42 "$?"
	run_in "$way" --policy degrade.yaml -- sh -c 'kill -TERM $$'
	expect "$w, degraded: 128+N passes (143)" 143 "$RC"
	run_in "$way" --policy degrade.yaml -- no-such-command-h5
	expect "$w, degraded: missing command 127" 127 "$RC"
	# (The sleeps below drop the captured stdout, so that a survivor cannot hold the
	# test up: survivors are what the rows look for.)
	m="1000.$RANDOM$RANDOM"
	t0=$SECONDS
	run_in "$way" --policy degrade.yaml --timeout 1 -- sh -c "exec sleep $m >/dev/null 2>&1"
	expect "$w, degraded: --timeout still gives 124" 124 "$RC"
	expect "$w, degraded: ... within 3 s" yes "$([ $((SECONDS - t0)) -le 3 ] && echo yes || echo no)"
	sleep 0.3
	expect "$w, degraded: --timeout kills the command" gone \
		"$(pgrep -f "sleep $m" >/dev/null && echo "still running" || echo gone)"
	pgrep -f "sleep $m" | xargs -r kill -KILL 2>/dev/null

	# The layers that remain: seccomp, no capabilities, no_new_privs.
	run_in "$way" --policy degrade.yaml -- cat /proc/self/status
	st() { sed -n "s/^$1:[[:space:]]*//p" <<<"$OUT"; }
	expect "$w, degraded: NoNewPrivs 1" 1 "$(st NoNewPrivs)"
	expect "$w, degraded: Seccomp 2" 2 "$(st Seccomp)"
	expect "$w, degraded: CapEff 0" 0000000000000000 "$(st CapEff)"
	expect "$w, degraded: CapPrm 0" 0000000000000000 "$(st CapPrm)"
	# Only a caller holding CAP_SETPCAP (root, or root of the test namespace) can
	# empty the bounding set; for the others no_new_privs makes it moot.
	if [ "$AS" = root ] || [ "$w" = sysctl ]; then
		expect "$w, degraded: CapBnd 0" 0000000000000000 "$(st CapBnd)"
	fi
	# Limits.
	run_in "$way" --policy degrade.yaml --limit nofile=32 -- ./it_sup openmany 100
	expect "$w, degraded: --limit nofile holds" "opened 29 EMFILE" "$OUT"
	run_in "$way" --policy degrade.yaml -- sh -c 'ulimit -c'
	expect "$w, degraded: core dumps 0" 0 "$OUT"
	# Clean environment.
	GITHUB_TOKEN=h5-planted AWS_SECRET_ACCESS_KEY=h5-planted run_in "$way" --policy degrade.yaml -- env
	expect "$w, degraded: planted secrets absent" 0 "$(grep -c h5-planted <<<"$OUT")"
	expect "$w, degraded: HALO_SANDBOX=1" 1 "$(sed -n 's/^HALO_SANDBOX=//p' <<<"$OUT")"
	# Landlock (this kernel has it): writes outside the workspace are refused even
	# without the read-only mount layout.
	out_path=/var/tmp/h5-failclosed-$$-$RANDOM
	run_in "$way" --policy degrade.yaml -- sh -c "echo x > $out_path && echo wrote || echo refused"
	expect "$w, degraded: Landlock refuses a write outside the workspace" refused "$OUT"
	rm -f "$out_path"
	run_in "$way" --policy degrade.yaml -- sh -c 'echo x > inside.txt && echo wrote'
	expect "$w, degraded: the workspace stays writable" wrote "$OUT"
	# No network namespace, so no proxy: with Landlock ABI >= 4 every TCP connect is
	# refused (the host's loopback included), and stderr says what is not filtered.
	abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
	run_in "$way" --policy degrade.yaml -- python3 -c 'import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
try:
    socket.create_connection(l.getsockname(), timeout=5); print("connected")
except OSError as e:
    print(__import__("errno").errorcode[e.errno])'
	if [ "$abi" -ge 4 ]; then
		expect "$w, degraded: TCP connect refused (Landlock ABI $abi)" EACCES "$OUT"
		expect_match "$w, degraded: stderr says TCP is refused, UDP is not" \
			"every TCP connect is refused.*UDP.*NOT filtered" "$ERR"
	else
		expect "$w, degraded: TCP connect open (Landlock ABI $abi)" connected "$OUT"
		expect_match "$w, degraded: stderr says egress is open" "egress is open" "$ERR"
	fi
	# TIOCSTI and ptrace stay closed by seccomp.
	run_in "$way" --policy degrade.yaml -- ./it_sup ptrace 1
	expect_match "$w, degraded: ptrace refused" "^(EPERM|EACCES|ESRCH)$" "$OUT"
	# No process outlives halo-run, even without a pid namespace.
	m="1000.$RANDOM$RANDOM"
	run_in "$way" --policy degrade.yaml -- sh -c "sleep $m >/dev/null 2>&1 & exit 0"
	sleep 0.3
	expect "$w, degraded: no orphan after the command exits" gone \
		"$(pgrep -f "sleep $m" >/dev/null && echo "still running" || echo gone)"
	pgrep -f "sleep $m" | xargs -r kill -KILL 2>/dev/null
	# Signals sent to halo-run reach the command.
	rm -f sigs sigs.ready
	"${!local_pre}" "$HALO" --quiet --policy degrade.yaml -- ./it_sup sigwait sigs </dev/null >/dev/null 2>&1 &
	hpid=$!
	for _ in $(seq 50); do [ -e sigs.ready ] && break; sleep 0.1; done
	for s in INT TERM HUP USR1 USR2 QUIT WINCH; do
		kill -s "$s" "$hpid" 2>/dev/null
		for _ in $(seq 20); do grep -qx "$s" sigs 2>/dev/null && break; sleep 0.1; done
	done
	for _ in $(seq 50); do kill -0 "$hpid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$hpid" 2>/dev/null
	wait "$hpid"
	rc=$?
	expect "$w, degraded: the seven signals reach the command" "INT TERM HUP USR1 USR2 QUIT WINCH" \
		"$(tr '\n' ' ' <sigs 2>/dev/null | sed 's/ $//')"
	expect "$w, degraded: ... and halo-run exits with its status (7)" 7 "$rc"
	pgrep -f "it_sup sigwait sigs" | xargs -r kill -KILL 2>/dev/null
	# ... nor after halo-run itself is killed.
	m="1000.$RANDOM$RANDOM"
	"${!local_pre}" "$HALO" --quiet --policy degrade.yaml -- sleep "$m" </dev/null >/dev/null 2>&1 &
	hpid=$!
	for _ in $(seq 50); do pgrep -f "sleep $m" >/dev/null && break; sleep 0.1; done
	kill -KILL "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
	sleep 0.3
	expect "$w, degraded: the command dies when halo-run is SIGKILLed" gone \
		"$(pgrep -f "sleep $m" >/dev/null && echo "still running" || echo gone)"
	pgrep -f "sleep $m" | xargs -r kill -KILL 2>/dev/null
done

finish
