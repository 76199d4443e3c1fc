#!/bin/bash
# halo-run doctor: every layer reported as this machine has it (tried, as root and as an
# unprivileged user), and as unavailable with the fix when user namespaces are taken
# away (the two ways of t_failclosed.sh: user.max_user_namespaces=0 in a test user
# namespace, and it_nouserns's seccomp filter); exit 0 only when everything the policy
# asks for is enforceable. Where the policy comes from and who could have changed it.
# Harness posture from planted files in a temporary HOME, FIFO, 2 MiB file and symlink
# to a secret included: reported, never hanging, never echoing a file's content.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
SECRET="h12-doctor-secret-$RANDOM$RANDOM"
mkdir -p home ws
export HOME="$TMPDIR/home"
cd ws || exit 1

run() { OUT=$(timeout -k 2 60 "$@" 2>"$E" </dev/null); RC=$?; ERR=$(cat "$E"); }
# layer NAME: "MACHINE | POLICY", from the text table's fixed columns (18, 28, rest)
layer() {
	awk -v n="$1" 'substr($0, 1, 19) == sprintf("%-18s ", n) {
		m = substr($0, 20, 28); sub(/ +$/, "", m); print m " | " substr($0, 49); exit }' <<<"$OUT"
}
jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); $1" <<<"$OUT"; }

# ---------------------------------------------------------------- this machine
run "$HALO" doctor
expect "doctor: exit 0 on this machine" 0 "$RC"
for l in "user namespace" "mount namespace" "pid namespace" "net namespace" "ipc namespace" \
	"uts namespace" seccomp no_new_privs "egress proxy" capture; do
	expect_match "$l: available and used" "^available \| used" "$(layer "$l")"
done
expect_match "landlock: available with its ABI" "^available, ABI [0-9]+ \| used" "$(layer landlock)"
if [ "$AS" = root ]; then
	expect_match "cgroups for root: the controllers found" "^(pids|unavailable)" "$(layer 'cgroups (root)')"
else
	expect_match "cgroups as a user: not needed" "^not needed \(not root\) \| not used" "$(layer 'cgroups (root)')"
fi
expect_match "each layer says what it does not stop" "seccomp: a deny list" "$OUT"
expect_match "the result line" "^doctor: everything the policy asks for is enforceable" "$OUT"
expect_match "the policy source: the embedded default" "^policy: the embedded default" "$OUT"

run "$HALO" doctor --json
expect "--json: exit 0" 0 "$RC"
expect "--json: twelve layers, all available" "12 12 True" \
	"$(jq_py 'print(len(d["layers"]), sum(l["available"] for l in d["layers"]), d["enforceable"])')"
expect "--json: no problems" 0 "$(jq_py 'print(len(d["problems"]))')"

# ---------------------------------------------------------------- user namespaces taken away
pre_sysctl=(unshare --user --map-root-user sh -c
	'echo 0 >/proc/sys/user/max_user_namespaces || exit 99; exec "$@"' sh)
pre_seccomp=("$HELPERS/it_nouserns")
printf 'sandbox: {failIfUnavailable: false}\n' >"$TMPDIR/degrade.yaml"
ways=()
if timeout 10 "${pre_sysctl[@]}" true 2>/dev/null; then ways+=(sysctl); else
	skip "the sysctl way" "cannot set user.max_user_namespaces in a test namespace"
fi
[ -x "$HELPERS/it_nouserns" ] && ways+=(seccomp) || fail "seccomp way" "helper it_nouserns missing"
for way in "${ways[@]}"; do
	declare -n pre="pre_$way"
	want_errno=$([ "$way" = sysctl ] && echo ENOSPC || echo EPERM)
	run "${pre[@]}" "$HALO" doctor
	expect "$way: doctor exits 1" 1 "$RC"
	expect_match "$way: user namespace unavailable ($want_errno)" "^unavailable \($want_errno\) \| used" \
		"$(layer 'user namespace')"
	expect_match "$way: net namespace unavailable" "^unavailable" "$(layer 'net namespace')"
	expect_match "$way: the proxy is unavailable with it" "^unavailable" "$(layer 'egress proxy')"
	expect_match "$way: seccomp still available" "^available" "$(layer seccomp)"
	expect_match "$way: what failed names the call" "user namespace: unshare\(CLONE_NEWUSER\)" "$OUT"
	if [ "$way" = sysctl ]; then
		expect_match "$way: the problem names max_user_namespaces" \
			"^problem: user.max_user_namespaces is 0" "$OUT"
		expect_match "$way: ... with the fix" "fix: as root: sysctl -w user.max_user_namespaces=" "$OUT"
	else
		expect_match "$way: the problem names the container's seccomp filter" \
			"^problem: this process already runs under a seccomp filter" "$OUT"
	fi
	expect_match "$way: NOT enforceable" "^doctor: 1 problem: the policy is NOT fully enforceable" "$OUT"
	run "${pre[@]}" "$HALO" doctor --json
	expect "$way: --json says not enforceable" "False" "$(jq_py 'print(d["enforceable"])')"
	run "${pre[@]}" "$HALO" doctor --policy "$TMPDIR/degrade.yaml"
	expect "$way, failIfUnavailable: false: still exit 1 (masking and egress not enforced)" 1 "$RC"
	expect_match "$way, failIfUnavailable: false: says what would run without" \
		"note: the policy says failIfUnavailable: false, so halo-run would still run" "$OUT"
	unset -n pre
done

# ---------------------------------------------------------------- the policy's source
printf 'sandbox: {mode: workspace-write}\n' >"$TMPDIR/p.yaml"
chmod 644 "$TMPDIR/p.yaml"
run "$HALO" doctor --policy "$TMPDIR/p.yaml"
expect "--policy (own file, mode 644): exit 0" 0 "$RC"
expect_match "--policy: named as the source" "^policy: --policy on the command line: $TMPDIR/p.yaml" "$OUT"
chmod 666 "$TMPDIR/p.yaml"
run "$HALO" doctor --policy "$TMPDIR/p.yaml"
expect "a policy file others can write: exit 1" 1 "$RC"
expect_match "... named, with its mode" "problem: policy file $TMPDIR/p.yaml is writable by group or others \(mode 0666\)" "$OUT"
chmod 644 "$TMPDIR/p.yaml"
mkdir -p "$TMPDIR/open" && cp "$TMPDIR/p.yaml" "$TMPDIR/open/p.yaml" && chmod 777 "$TMPDIR/open"
run "$HALO" doctor --policy "$TMPDIR/open/p.yaml"
expect "a policy file in a directory others can write: exit 1" 1 "$RC"
expect_match "... the directory named" "is in $TMPDIR/open, which group or others can write \(mode 0777\): the file can be replaced" "$OUT"
HALO_POLICY="$TMPDIR/p.yaml" run "$HALO" doctor
expect "HALO_POLICY (no machine policy): exit 0" 0 "$RC"
expect_match "HALO_POLICY: reported" "note: HALO_POLICY is set in the environment: whoever sets" "$OUT"
expect_match "HALO_POLICY: named as the source" "^policy: \\\$HALO_POLICY: $TMPDIR/p.yaml" "$OUT"

# A machine policy in /etc/halo, for root only: a private mount namespace whose /etc
# is a copy, so the real /etc is never touched.
if [ "$AS" = root ]; then
	etc="$TMPDIR/etc-copy"
	mkdir -p "$etc/halo"
	for f in passwd group nsswitch.conf hosts ld.so.cache; do cp -a "/etc/$f" "$etc/" 2>/dev/null; done
	printf 'sandbox: {mode: workspace-write}\n' >"$etc/halo/policy.yaml"
	in_etc() { timeout -k 2 60 unshare --mount --propagation private sh -c \
		'mount --bind "$0" /etc && exec "$@"' "$etc" "$@" 2>"$E" </dev/null; }
	chown 65534 "$etc/halo/policy.yaml"
	OUT=$(in_etc "$HALO" doctor); RC=$?
	expect "machine policy owned by another user: exit 1" 1 "$RC"
	expect_match "... the origin is the machine policy" "^policy: the machine policy \(/etc/halo\): /etc/halo/policy.yaml" "$OUT"
	expect_match "... not owned by root" "problem: the machine policy /etc/halo/policy.yaml is owned by uid 65534, not root" "$OUT"
	chown 0:0 "$etc/halo/policy.yaml"
	chmod 644 "$etc/halo/policy.yaml"
	OUT=$(in_etc "$HALO" doctor); RC=$?
	expect "machine policy owned by root, 644: exit 0" 0 "$RC"
	OUT=$(in_etc setpriv --reuid=65534 --regid=65534 --clear-groups "$HALO" doctor); RC=$?
	expect "... as uid 65534: exit 0" 0 "$RC"
	chmod 646 "$etc/halo/policy.yaml"
	OUT=$(in_etc "$HALO" doctor); RC=$?
	expect_match "machine policy writable by others: reported" "the machine policy /etc/halo/policy.yaml is writable by group or others" "$OUT"
	chmod 644 "$etc/halo/policy.yaml"
	chown 65534 "$etc/halo"
	OUT=$(in_etc setpriv --reuid=65534 --regid=65534 --clear-groups "$HALO" doctor); RC=$?
	expect "machine policy in a directory the invoking user owns: exit 1" 1 "$RC"
	expect_match "... you can replace it" "is in /etc/halo, owned by uid 65534: that user can replace the file|which you own: you can replace the machine's policy" "$OUT"
	chown 0 "$etc/halo"
	OUT=$(HALO_POLICY="$TMPDIR/p.yaml" in_etc "$HALO" doctor); RC=$?
	expect "HALO_POLICY replacing the machine policy: exit 1" 1 "$RC"
	expect_match "... reported" "problem: HALO_POLICY is set in the environment and replaces the machine policy /etc/halo/policy.yaml" "$OUT"
fi

# ---------------------------------------------------------------- harness posture
H="$TMPDIR/home"
mkdir -p "$H/.codex" "$H/.gemini" "$H/.cursor"
printf '# %s\nmodel = "o4"\n[profiles.yolo]\nsandbox_mode = "danger-full-access"\n' "$SECRET" >"$H/.codex/config.toml"
printf '{"tools": {"sandbox": false}, "note": "%s"}\n' "$SECRET" >"$H/.gemini/settings.json"
printf '// %s\n{"type": "insecure_none"}\n' "$SECRET" >"$H/.cursor/sandbox.json"
GEMINI_SANDBOX=false OPENCODE_PERMISSION="{\"bash\":\"allow\",\"x\":\"$SECRET\"}" run "$HALO" doctor
expect "posture findings do not change the exit status" 0 "$RC"
expect_match "posture:codex: danger-full-access in a profile, with the line" \
	'^posture:codex: sandbox_mode = "danger-full-access" in a \[profiles.NAME\] table of ~/.codex/config.toml \(line 4\).*; fix: ' "$OUT"
expect_match "posture:gemini: tools.sandbox false" '^posture:gemini: "tools": \{"sandbox": false\} in ~/.gemini/settings.json.*; fix: ' "$OUT"
expect_match "posture:gemini: GEMINI_SANDBOX=false" '^posture:gemini: GEMINI_SANDBOX is false in the environment.*; fix: ' "$OUT"
expect_match "posture:cursor: insecure_none" '^posture:cursor: "type": "insecure_none" in ~/.cursor/sandbox.json.*; fix: ' "$OUT"
expect_match "posture:opencode: OPENCODE_PERMISSION set (content not shown)" \
	'^posture:opencode: OPENCODE_PERMISSION is set in the environment \(content not shown\)' "$OUT"
expect "no file's or variable's content in the output" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
GEMINI_SANDBOX=false run "$HALO" doctor --json
expect "--json: the posture findings" "codex,cursor,gemini,gemini" \
	"$(jq_py 'print(",".join(sorted(p["harness"] for p in d["posture"])))')"
expect "--json: no content either" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"

# Hostile files: a FIFO must not hang doctor, a 2 MiB file and a symlink to a secret
# are refused unread; CODEX_HOME points elsewhere and is read instead.
rm -f "$H/.gemini/settings.json" "$H/.cursor/sandbox.json"
mkfifo "$H/.gemini/settings.json"
printf '%s\n' "$SECRET" >"$TMPDIR/secret.txt"
ln -s "$TMPDIR/secret.txt" "$H/.cursor/sandbox.json"
mkdir -p "$TMPDIR/codexhome"
{ printf 'sandbox_mode = "%s"\n# ' "$SECRET"; head -c 2097152 /dev/zero | tr '\0' 'x'; echo; } >"$TMPDIR/codexhome/config.toml"
t0=$SECONDS
CODEX_HOME="$TMPDIR/codexhome" run "$HALO" doctor
expect "hostile files: doctor still exits 0, within 10 s" "0 yes" "$RC $([ $((SECONDS - t0)) -le 10 ] && echo yes || echo no)"
expect_match "a FIFO: not read" '^posture:gemini: ~/.gemini/settings.json is not a regular file: not read' "$OUT"
expect_match "a symlink to a secret: not followed" '^posture:cursor: ~/.cursor/sandbox.json is a symbolic link: not followed, not read' "$OUT"
expect_match "CODEX_HOME: reported and read instead" "^posture:codex: CODEX_HOME is set to $TMPDIR/codexhome" "$OUT"
expect_match "a 2 MiB file: not read" '^posture:codex: \$CODEX_HOME/config.toml is larger than 1 MiB: not read' "$OUT"
expect "the secret behind the symlink and in the big file never appears" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
CODEX_HOME="$TMPDIR/codexhome" run "$HALO" doctor --json
expect "... nor in --json" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"
# A parse error names a line, never the text.
rm -f "$TMPDIR/codexhome/config.toml" "$H/.codex/config.toml"
printf 'ok = 1\n%s = = broken\n' "$SECRET" >"$H/.codex/config.toml"
run "$HALO" doctor
expect_match "a broken config.toml: the line, not the text" '^posture:codex: ~/.codex/config.toml could not be parsed \(line 2: ' "$OUT"
expect "... and no content" 0 "$(grep -c "$SECRET" <<<"$OUT$ERR")"

finish
