#!/bin/bash
# The managed policy: /etc/halo/managed.{yaml,json}, root's, is the first layer
# whatever --policy, HALO_POLICY or the discovered files say; they may only tighten
# it: a loosening of a field it sets refuses the launch (125) naming the file, the
# field and the managed file. policy, doctor and --dry-run show it. A managed file
# that is not root's, is writable by others or sits in a directory others can write
# is refused (125), never ignored.
#
# The real /etc is never touched: halo-run runs in a private mount namespace whose
# /etc is a copy (bind-mounted over /etc), which needs root. The uid 65534 rows run
# there too, through setpriv, after root has set the namespace up; the unprivileged
# pass of run.sh cannot bind-mount, and skips.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
if [ "$AS" != root ]; then
	skip "managed policy rows" "binding a file over /etc/halo needs root (a private mount namespace); the root pass runs each row as root and as uid 65534"
	finish
	exit
fi
T="$TMPDIR/mg"
etc="$T/etc"
mkdir -p "$etc" "$T/ws" "$T/home-root/.config/halo" "$T/home-nobody/.config/halo"
cp -a /etc/. "$etc/" 2>/dev/null
rm -rf "$etc/halo"
mkdir -m 755 "$etc/halo"
# Homes the test owns, in the copy's password database only.
sed -i -e "s|^root:\([^:]*:[^:]*:[^:]*:[^:]*\):[^:]*:|root:\1:$T/home-root:|" \
	-e "s|^nobody:\([^:]*:[^:]*:[^:]*:[^:]*\):[^:]*:|nobody:\1:$T/home-nobody:|" "$etc/passwd"
chmod -R a+rwX "$T/ws"
chown -R 65534:65534 "$T/home-nobody"
chmod 755 "$T" "$T/home-root"
M="$etc/halo/managed.yaml"
cat >"$M" <<'EOF'
egress:
  default: deny
  allowedDomains: [a.example, b.example]
  deniedDomains: [pastebin.com]
limits: {cpuSeconds: 60}
EOF
chmod 644 "$M"
printf 'egress:\n  allowedDomains: [a.example, evil.example]\n' >"$T/loose.yaml"
printf 'egress:\n  allowedDomains: [a.example]\n  deniedDomains: [b.example]\nlimits: {cpuSeconds: 30}\n' >"$T/tight.yaml"
printf 'limits: {cpuSeconds: 90}\n' >"$T/cpu.yaml"
printf 'limits: {memoryMB: 8192}\n' >"$T/mem.yaml"
chmod 644 "$T"/*.yaml

ERR="$T/err"
# in_etc [AS] CMD...: CMD in a private mount namespace whose /etc is the copy, as root
# or (AS=nobody) as uid 65534; cwd the workspace, stderr in $ERR.
in_etc() {
	local who=$1
	shift
	local pre=()
	[ "$who" = nobody ] && pre=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	(cd "$T/ws" && timeout -k 2 60 unshare --mount --propagation private sh -c \
		'mount --bind "$0" /etc && exec "$@"' "$etc" "${pre[@]}" "$@" 2>"$ERR" </dev/null)
}
home_of() { [ "$1" = nobody ] && echo "$T/home-nobody" || echo "$T/home-root"; }
ran() { grep -qx ran <<<"$1" && echo ran || echo no; }

for who in root nobody; do
	W="as $who"
	OUT=$(in_etc "$who" "$HALO" --policy "$T/loose.yaml" -- sh -c 'echo ran')
	expect "$W: --policy loosening a managed field: 125, nothing ran" "125:no" "$?:$(ran "$OUT")"
	expect_match "... names the file, the field and the managed file" \
		"error: $T/loose.yaml: loosens egress.allowedDomains \(adds 'evil.example'\), which the managed policy /etc/halo/managed.yaml sets" "$(cat "$ERR")"
	OUT=$(HALO_POLICY="$T/loose.yaml" in_etc "$who" "$HALO" -- sh -c 'echo ran')
	expect "$W: HALO_POLICY loosening it: 125, nothing ran" "125:no" "$?:$(ran "$OUT")"
	expect_match "... named" "$T/loose.yaml: loosens egress.allowedDomains" "$(cat "$ERR")"
	cp "$T/loose.yaml" "$(home_of "$who")/.config/halo/policy.yaml"
	OUT=$(in_etc "$who" "$HALO" -- sh -c 'echo ran')
	expect "$W: the discovered ~/.config/halo/policy.yaml loosening it: 125" "125:no" "$?:$(ran "$OUT")"
	expect_match "... named" "$(home_of "$who")/.config/halo/policy.yaml: loosens egress.allowedDomains" "$(cat "$ERR")"
	rm -f "$(home_of "$who")/.config/halo/policy.yaml"
	cp "$T/loose.yaml" "$etc/halo/policy.yaml"
	OUT=$(in_etc "$who" "$HALO" -- sh -c 'echo ran')
	expect "$W: the discovered /etc/halo/policy.yaml loosening it: 125" "125:no" "$?:$(ran "$OUT")"
	rm -f "$etc/halo/policy.yaml"
	OUT=$(in_etc "$who" "$HALO" --policy "$T/tight.yaml" --policy "$T/cpu.yaml" -- sh -c 'echo ran')
	expect "$W: a later file raising a managed limit: 125" "125:no" "$?:$(ran "$OUT")"
	expect_match "... limits.cpuSeconds named" "loosens limits.cpuSeconds \(60 → 90\), which the managed policy" "$(cat "$ERR")"

	rm -f "$T/ws/ev.jsonl"
	OUT=$(in_etc "$who" "$HALO" --events ev.jsonl --policy "$T/tight.yaml" -- sh -c 'echo ran')
	expect "$W: a file that only tightens: it runs" "0:ran" "$?:$(ran "$OUT")"
	expect "... the events' start record lists the managed layer first" \
		"builtin:floor /etc/halo/managed.yaml $T/tight.yaml" \
		"$(python3 -c 'import json,sys; print(" ".join(json.loads(open(sys.argv[1]).readline())["layers"]))' "$T/ws/ev.jsonl" 2>&1)"
	OUT=$(in_etc "$who" "$HALO" --policy "$T/mem.yaml" -- sh -c 'echo ran')
	expect "$W: a field the managed file does not set: it runs" "0:ran" "$?:$(ran "$OUT")"
	OUT=$(in_etc "$who" "$HALO" check evil.example:443)
	expect "$W: no other file: the managed policy alone decides (check denies)" 1 "$?"
	OUT=$(in_etc "$who" "$HALO" check --policy "$T/tight.yaml" pastebin.com)
	expect_match "$W: its deniedDomains stay under a caller's file" "deniedDomains.*pastebin.com" "$OUT"

	OUT=$(in_etc "$who" "$HALO" policy --policy "$T/tight.yaml")
	expect_match "$W: halo-run policy shows the managed layer first" "^# source: managed /etc/halo/managed.yaml, $T/tight.yaml$" "$OUT"
	OUT=$(in_etc "$who" "$HALO" policy --json --policy "$T/tight.yaml")
	expect "$W: halo-run policy --json too" "managed /etc/halo/managed.yaml, $T/tight.yaml" \
		"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["effective"]["source"])' <<<"$OUT" 2>&1)"
	OUT=$(in_etc "$who" "$HALO" --dry-run --policy "$T/tight.yaml" -- true)
	expect_match "$W: --dry-run shows it" "^policy: managed /etc/halo/managed.yaml, $T/tight.yaml" "$OUT"
	OUT=$(in_etc "$who" "$HALO" doctor --policy "$T/tight.yaml")
	expect_match "$W: doctor shows it" "^managed: /etc/halo/managed.yaml \(the first layer" "$OUT"
	OUT=$(in_etc "$who" "$HALO" doctor --json --policy "$T/tight.yaml")
	expect "$W: doctor --json names it" "/etc/halo/managed.yaml" \
		"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["managed"])' <<<"$OUT" 2>&1)"
done

# A managed file that could have been changed by someone else: refused, never ignored.
trust() { # NAME WANT-MESSAGE: a run as uid 65534 and as root refused with WANT
	local name=$1 want=$2
	for who in nobody root; do
		OUT=$(in_etc "$who" "$HALO" --policy "$T/tight.yaml" -- sh -c 'echo ran')
		expect "$name, as $who: 125, nothing ran" "125:no" "$?:$(ran "$OUT")"
		expect_match "... says why" "the managed policy /etc/halo/managed.yaml $want.*: refused" "$(cat "$ERR")"
	done
}
chmod 664 "$M"
trust "managed file writable by its group" "is writable by group or others \(mode 0664\)"
chmod 644 "$M"
chown 65534 "$M"
trust "managed file owned by uid 65534" "is owned by uid 65534, not root"
chown 0 "$M"
chmod 777 "$etc/halo"
trust "managed file in a directory others can write" "is in /etc/halo, which group or others can write"
chmod 755 "$etc/halo"
chown 65534 "$etc/halo"
trust "managed file in a directory uid 65534 owns" "is in /etc/halo, owned by uid 65534"
chown 0 "$etc/halo"
mv "$M" "$T/real-managed.yaml"
ln -s "$T/real-managed.yaml" "$M"
trust "managed file a symbolic link" "is a symbolic link"
rm -f "$M"
mv "$T/real-managed.yaml" "$M"
printf '{"egress": {"deniedDomains": ["x.example"]}}\n' >"$etc/halo/managed.json"
chmod 644 "$etc/halo/managed.json"
OUT=$(in_etc root "$HALO" -- sh -c 'echo ran')
expect "managed.yaml and managed.json both: 125" "125:no" "$?:$(ran "$OUT")"
expect_match "... says so" "both /etc/halo/managed.yaml and /etc/halo/managed.json exist" "$(cat "$ERR")"
rm -f "$M"
OUT=$(in_etc nobody "$HALO" check x.example)
expect "managed.json alone is the managed layer" 1 "$?"
printf 'egress: {defualt: deny}\n' >"$M"
chmod 644 "$M"
rm -f "$etc/halo/managed.json"
OUT=$(in_etc nobody "$HALO" -- sh -c 'echo ran')
expect "a managed file that does not validate: 125" "125:no" "$?:$(ran "$OUT")"
expect_match "... naming it" "/etc/halo/managed.yaml" "$(cat "$ERR")"
finish
