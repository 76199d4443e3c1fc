#!/bin/bash
# halo-run verify: halo-run re-runs its own binary inside the sandbox as a probe runner
# and tries the escapes its policy and seccomp table forbid. Every row PASSes under the
# embedded default and under a strict policy (protected paths outside /tmp, globs, a
# denied domain, an allowed name that resolves to loopback, limits), as root and as an
# unprivileged user; a deliberately weakened run (failIfUnavailable: false with user
# namespaces unavailable) shows FAILs and exits non-zero. No planted secret is printed.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
SECRET="h12-verify-secret-$RANDOM$RANDOM"

# Protected paths the sandbox must mask, outside /tmp (the sandbox gets a fresh /tmp,
# where a protected path would simply be missing and prove nothing about masking).
KEYS=$(mktemp -d /var/tmp/h12-verify-keys.XXXXXX) || exit 1
trap 'rm -rf "$KEYS"' EXIT
mkdir -p "$KEYS/keys" "$HOME/.ssh"
printf '%s\n' "$SECRET" >"$KEYS/keys/id_test"
printf '%s\n' "$SECRET" >"$KEYS/token"
printf '%s\n' "$SECRET" >"$HOME/.ssh/id_test"

run() { OUT=$(timeout -k 2 120 "$@" 2>"$E" </dev/null); RC=$?; ERR=$(cat "$E"); }
result() { awk -v p="$1" 'index($0, p) == 1 { print $NF; exit }' <<<"$OUT"; }
count() { grep -cE "(^| )$1\$" <<<"$OUT"; }
jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); $1" <<<"$OUT"; }

# ---------------------------------------------------------------- the embedded default
run "$HALO" verify
expect "default policy: exit 0" 0 "$RC"
expect "default policy: no FAIL" 0 "$(count FAIL)"
expect "default policy: at least 30 probes PASS" yes "$([ "$(count PASS)" -ge 30 ] && echo yes || echo "no ($(count PASS))")"
expect_match "default policy: the summary" "^verify: [0-9]+ passed, 0 failed" "$OUT"
for p in "launch halo-run with the probe runner" "planted secret HALO_VERIFY_SECRET" \
	"TCP to the host's 127.0.0.1" "UDP to the host's 127.0.0.1" "the host's abstract unix socket" \
	"proxy CONNECT to denied" "proxy CONNECT to 127.0.0.1" "persistence: append to .git/hooks" \
	"persistence: append to .bashrc" "read planted .env" "write outside the writable set: /etc" \
	"signal a host process" "descriptor inherited from outside" "open /proc/1/mem" \
	"seccomp: unshare(CLONE_NEWUSER)" "seccomp: mount" "seccomp: ptrace" "seccomp: bpf" \
	"seccomp: io_uring_setup" "seccomp: keyctl" "seccomp: ioctl(TIOCSTI)" \
	"seccomp: socket(AF_INET, SOCK_RAW)" "seccomp: socket(AF_PACKET)" "limit: core dumps" \
	"seccomp: chmod(04600)" "network namespace" "home as the workspace: create a file there" \
	"home set: append to ~/.bashrc" "home set: create ~/.bash_aliases" "home set: create ~/.config/git" \
	"home set: a program in ~/.local/bin" "home set: create ~/.cargo/config.toml" \
	"home set: create ~/.zcompdump-HOST-VERSION (by its start)" \
	"launch in a temporary home (home set)"; do
	expect "default: $p ... PASS" PASS "$(result "$p")"
done
expect "default: the secret never appears" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
expect "default: the probes' refused host ports are not explained as the user's (no hostPorts line)" 0 \
	"$(grep -c 'has no listener in the sandbox' <<<"$OUT$ERR")"
expect "default: nothing left behind (workspace removed)" 0 "$(find "$TMPDIR" -maxdepth 1 -name 'halo-verify.*' | wc -l)"
expect "default: nothing left behind (temporary home removed)" 0 "$(find "$TMPDIR" -maxdepth 1 -name 'halo-verify-home.*' | wc -l)"
printf 'sandbox: {guardPersistence: false}\n' >"$TMPDIR/noguard.yaml"
run "$HALO" verify --policy "$TMPDIR/noguard.yaml"
expect_match "guardPersistence false: the home set rows are skipped, saying why" \
	"^home set: .*guardPersistence: false.*SKIP" "$OUT"
expect "default: no probe file left on the host" 0 "$(find /etc /var/tmp "$HOME" -maxdepth 1 -name 'halo-verify.*' 2>/dev/null | wc -l)"

run "$HALO" verify --json
expect "--json: exit 0" 0 "$RC"
expect "--json: passed == probes - skipped, failed 0" "True 0" \
	"$(jq_py 'print(d["passed"] + d["skipped"] == len(d["probes"]), d["failed"])')"
expect "--json: every row has probe, expected, got, result" True \
	"$(jq_py 'print(all(set(r) == {"probe","expected","got","result"} for r in d["probes"]))')"

# ---------------------------------------------------------------- a strict policy
cat >"$TMPDIR/strict.yaml" <<EOF
sandbox:
  mode: workspace-write
  protectedPaths: [~/.ssh, ~/.aws, "$KEYS/keys", "$KEYS/token", ".env*", "*.pem", "secrets/*"]
  failIfUnavailable: true
  guardPersistence: true
egress:
  default: deny
  allowedDomains: [localhost, "127.0.0.1"]
  deniedDomains: [pastebin.com, "*.evil.example"]
limits: {cpuSeconds: 60, memoryMB: 4096, fileSizeMB: 64, openFiles: 256, processes: 512, wallSeconds: 120}
EOF
run "$HALO" verify --policy "$TMPDIR/strict.yaml"
expect "strict policy: exit 0" 0 "$RC"
expect "strict policy: no FAIL" 0 "$(count FAIL)"
expect "strict policy: no SKIP" 0 "$(count SKIP)"
expect "strict: a masked directory's file cannot be read" "EACCES PASS" \
	"$(awk -v p="read protected $KEYS/keys/id_test" 'index($0, p) == 1 { print $(NF-1), $NF }' <<<"$OUT")"
expect "strict: a masked file cannot be read" PASS "$(result "read protected $KEYS/token")"
expect "strict: ... nor opened for writing" PASS "$(result "open protected $KEYS/token for writing")"
expect "strict: nothing can be created in a masked directory" PASS "$(result "create a file in protected $KEYS/keys")"
expect "strict: ~/.ssh" PASS "$(result "read protected $HOME/.ssh/id_test")"
expect "strict: planted *.pem" PASS "$(result "read planted .pem")"
expect "strict: planted secrets/*" PASS "$(result "read planted secrets/")"
expect "strict: the denied domain gets 403" "403 PASS" \
	"$(awk 'index($0, "proxy CONNECT to denied pastebin.com") == 1 { print $(NF-1), $NF }' <<<"$OUT")"
expect "strict: an allowed name resolving to loopback is refused (403)" "403 PASS" \
	"$(awk 'index($0, "proxy CONNECT to localhost") == 1 { print $(NF-1), $NF }' <<<"$OUT")"
expect "strict: an allowed private IP literal is refused (403)" "403 PASS" \
	"$(awk 'index($0, "proxy CONNECT to 127.0.0.1") == 1 { print $(NF-1), $NF }' <<<"$OUT")"
for l in "limit: cpu seconds" "limit: open files" "limit: file size" "limit: processes" \
	"limit: memory, "; do
	expect "strict: $l" PASS "$(result "$l")"
done
expect "strict: the secret never appears" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
[ -z "$(cat "$KEYS/keys/id_test")" ] && fail "strict: the planted key is intact"
expect "strict: nothing created in the masked directory on the host" "id_test" "$(ls "$KEYS/keys")"

printf 'sandbox: {mode: read-only}\n' >"$TMPDIR/ro.yaml"
run "$HALO" verify --policy "$TMPDIR/ro.yaml"
expect "read-only policy: exit 0, no FAIL" "0 0" "$RC $(count FAIL)"
expect "read-only: the workspace refuses a new file" PASS "$(result "create a file in the read-only workspace")"

# ---------------------------------------------------------------- the real workspace
# (issue 31) Besides its own workspace, verify checks the one a launch would use
# (--workspace DIR, else the current directory): every protected file and guard target
# a fresh walk finds there, probed from inside a launch there. It leaves no index, no
# watcher and no runner behind. A launcher made to leave one mask out (a test helper:
# tests/helpers/it_leaky.c) is caught, naming the file; a plain one passes.
RW=$TMPDIR/realws
STATE=$(mktemp -d /var/tmp/h31-verify-state.XXXXXX) || exit 1
trap 'rm -rf "$KEYS" "$STATE"' EXIT
mkdir -p "$RW/sub"
printf '%s\n' "$SECRET" >"$RW/.env"
printf '%s\n' "$SECRET" >"$RW/sub/.env.leak"
git init -q "$RW" 2>/dev/null || mkdir -p "$RW/.git/hooks" "$RW/.git/objects" "$RW/.git/refs"
[ -f "$RW/.git/HEAD" ] || echo 'ref: refs/heads/main' >"$RW/.git/HEAD"
[ -f "$RW/.git/config" ] || printf '[core]\n\tbare = false\n' >"$RW/.git/config"
watchers() { ps -eo args | awk -v d="$STATE" '$1 == "halo-run-index-watch" && index($3, d) == 1' | wc -l; }
left() { echo "idx=$(find "$STATE" -name '*.idx' | wc -l) watchers=$(watchers) runners=$(find /var/tmp -maxdepth 1 -name "halo-verify-runner.*" -user "$(id -u)" | wc -l) probes=$(find "$RW" -name 'halo-verify.*' | wc -l)"; }
runners0=$(find /var/tmp -maxdepth 1 -name "halo-verify-runner.*" -user "$(id -u)" | wc -l)
XDG_STATE_HOME=$STATE run "$HALO" verify --workspace "$RW"
expect "workspace: exit 0" 0 "$RC"
expect "workspace: named" "workspace checked: $RW" "$(grep '^workspace checked:' <<<"$OUT")"
for p in "launch halo-run in the workspace" "workspace: read protected ./.env " \
	"workspace: read protected ./sub/.env.leak" "workspace: append to guarded ./.git/config" \
	"workspace: new file in guarded ./.git/hooks"; do
	expect "workspace: $p ... PASS" PASS "$(result "$p")"
done
expect "workspace: nothing left behind (no index, watcher, runner or probe file)" \
	"idx=0 watchers=0 runners=$runners0 probes=0" "$(left)"
expect "workspace: the secret never appears" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
OUT=$(cd "$RW" && XDG_STATE_HOME=$STATE timeout -k 2 120 "$HALO" verify 2>"$E" </dev/null)
expect "workspace: the current directory by default" "workspace checked: $RW" "$(grep '^workspace checked:' <<<"$OUT")"
# With an index and its watcher already there (a launch made them; forced: a tree this
# small gets none otherwise): used, not changed.
(cd "$RW" && XDG_STATE_HOME=$STATE HALO_RUN_INDEX_WATCH=1 "$HALO" -- true 2>/dev/null)
for i in $(seq 1 20); do [ "$(watchers)" -ge 1 ] && break; sleep 0.1; done
idx_before=$(find "$STATE" -name '*.idx' -exec stat -c '%n %i' {} + | sort)
XDG_STATE_HOME=$STATE run "$HALO" verify --workspace "$RW"
expect "workspace, with an index and its watcher: exit 0" 0 "$RC"
expect "workspace: the index files untouched" "$idx_before" "$(find "$STATE" -name '*.idx' -exec stat -c '%n %i' {} + | sort)"
expect "workspace: no other watcher started" 1 "$(watchers)"
rm -rf "$STATE/halo-run" # its socket gone: the watcher exits
if [ -x "$HELPERS/it_leaky" ]; then
	HALO_TEST_LEAK_NAME=.env.leak XDG_STATE_HOME=$STATE run "$HELPERS/it_leaky" verify --workspace "$RW"
	expect "leaky launcher: exit 1" 1 "$RC"
	expect "leaky launcher: the file it leaves readable FAILs, named" FAIL "$(result "workspace: read protected ./sub/.env.leak")"
	expect "leaky launcher: the other files still PASS" PASS "$(result "workspace: read protected ./.env ")"
	expect_match "leaky launcher: the summary says NOT enforced" "^verify: [0-9]+ passed, 1 failed.*NOT fully enforced" "$OUT"
	expect "leaky launcher: the secret never appears" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
	mkdir -p "$TMPDIR/plainws" && printf 'x\n' >"$TMPDIR/plainws/.env"
	HALO_TEST_LEAK_NAME=.env.leak XDG_STATE_HOME=$STATE run "$HELPERS/it_leaky" verify --workspace "$TMPDIR/plainws"
	expect "leaky launcher, a workspace without that file: exit 0" 0 "$RC"
	expect "leaky launcher: nothing left behind" "idx=0 watchers=0 runners=$runners0 probes=0" "$(left)"
else
	fail "leaky launcher" "helper it_leaky missing"
fi

# ---------------------------------------------------------------- weakened: FAILs
printf 'sandbox: {mode: "off"}\n' >"$TMPDIR/off.yaml"
run "$HALO" verify --policy "$TMPDIR/off.yaml"
expect "sandbox.mode off: exit 1, nothing probed (no writes to the host)" "1 1" "$RC $(count FAIL)"
expect_match "... and says why" "^sandbox.mode is off: commands run unsandboxed +sandboxed +off +FAIL" "$OUT"
cat >"$TMPDIR/weak.yaml" <<EOF
sandbox:
  protectedPaths: ["$KEYS/keys", "$KEYS/token"]
  failIfUnavailable: false
EOF
pre_sysctl=(unshare --user --map-root-user sh -c
	'echo 0 >/proc/sys/user/max_user_namespaces || exit 99; exec "$@"' sh)
pre_seccomp=("$HELPERS/it_nouserns")
ways=()
timeout 10 "${pre_sysctl[@]}" true 2>/dev/null && ways+=(sysctl) ||
	skip "the sysctl way" "cannot set user.max_user_namespaces in a test namespace"
[ -x "$HELPERS/it_nouserns" ] && ways+=(seccomp) || fail "seccomp way" "helper it_nouserns missing"
for way in "${ways[@]}"; do
	declare -n pre="pre_$way"
	run "${pre[@]}" "$HALO" verify --policy "$TMPDIR/weak.yaml"
	expect "$way, failIfUnavailable: false: exit 1" 1 "$RC"
	expect "$way: the launch itself ran (degraded)" PASS "$(result "launch halo-run with the probe runner")"
	expect "$way: the masked file is readable now: FAIL" FAIL "$(result "read protected $KEYS/token")"
	expect "$way: no network namespace: FAIL" FAIL "$(result "network namespace")"
	expect "$way: UDP reaches the host: FAIL" FAIL "$(result "UDP to the host's 127.0.0.1")"
	expect "$way: no proxy: FAIL" FAIL "$(result "proxy CONNECT to 127.0.0.1")"
	expect "$way: the host's hostname: FAIL" FAIL "$(result "hostname (uts namespace)")"
	expect "$way: persistence guard gone: FAIL" FAIL "$(result "persistence: append to .git/hooks/pre-commit")"
	expect "$way: the home set is gone: FAIL" FAIL "$(result "home set: create ~/.bash_aliases")"
	expect "$way: seccomp still holds (bpf PASS)" PASS "$(result "seccomp: bpf")"
	expect "$way: the environment is still clean" PASS "$(result "planted secret HALO_VERIFY_SECRET")"
	expect_match "$way: the summary says NOT enforced" "^verify: [0-9]+ passed, [1-9][0-9]* failed.*NOT fully enforced" "$OUT"
	expect_match "$way: the launcher's warning is shown" "NOT enforced: protected-path masking" "$OUT"
	expect "$way: the secret never appears" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
	run "${pre[@]}" "$HALO" verify --json --policy "$TMPDIR/weak.yaml"
	expect "$way: --json failed > 0" True "$(jq_py 'print(d["failed"] > 0)')"
	# Fail closed: the default policy refuses to launch at all.
	run "${pre[@]}" "$HALO" verify
	expect "$way, default policy: exit 1" 1 "$RC"
	expect "$way, default: the launch row fails with 125" "exit 125 FAIL" \
		"$(awk 'index($0, "launch halo-run with the probe runner") == 1 { print $(NF-2), $(NF-1), $NF }' <<<"$OUT")"
	expect_match "$way, default: the launcher's reason is shown" "max_user_namespaces" "$OUT"
	unset -n pre
done
expect "weakened runs left no probe file on the host" "id_test" "$(ls "$KEYS/keys")"

# ---------------------------------------------------------------- the probe runner itself
run "$HALO" __probe sys:bpf
expect "__probe alone is refused (125)" "125:" "$RC:$OUT"
expect_match "... pointing at verify" "internal to 'halo-run verify'" "$ERR"
HALO_SANDBOX=1 run "$HALO" __probe sys:bpf
expect "__probe without verify's token is refused" 125 "$RC"

finish
