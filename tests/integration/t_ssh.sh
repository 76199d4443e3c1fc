#!/bin/bash
# git over SSH (issue 13, item 3): an sshd on loopback (the invoking user's, on a port
# the kernel picks, its own host key and authorized_keys) serves a bare repository;
# inside the sandbox `git clone ssh://USER@git.test:PORT/...` works with the user's
# own key file and options in GIT_SSH_COMMAND (no ProxyCommand of theirs): the
# sandbox's ssh_config routes ssh through `halo-run connect` and the proxy, which
# decides git.test:PORT. A denied host fails with halo-run's reason on ssh's stderr;
# the allowed host on another port is refused too (the entry names a port).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

. "$IT/sshd_lib.sh"
cat >"$W/ssh.yaml" <<EOF
egress:
  default: deny
  allowedDomains: ["git.test:$PORT"]
  allowPrivate: [127.0.0.1/32]
env:
  set:
    GIT_SSH_COMMAND: "ssh -i $WS/key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
EOF
chmod a+r "$W/ssh.yaml"
URL="ssh://$ME@git.test:$PORT$S/repo.git"
# ssh runs a ProxyCommand with $SHELL; the unprivileged run's is nobody's nologin.
export SHELL=/bin/sh

rm -rf "$WS/clone"
OUT=$(hr ssh.yaml a.audit -- sh -c "git clone -q '$URL' clone && cat clone/f")
expect "git clone over ssh through the sandbox (the user's key and options)" "hello over ssh" "$OUT"
[ "$OUT" = "hello over ssh" ] || echo "# sshd: $(tail -3 "$S/sshd.log" | tr '\n' ' ') halo: $(head -c 400 "$W/err")"
expect "... the proxy decided git.test:$PORT (CONNECT)" "connect git.test $PORT allow allowedDomains[0] git.test:$PORT" \
	"$(aud a.audit proto host port decision rule)"
# halo-run's ssh_config and name files: read-only mounts of a file system that is
# read-only itself (the tmpfs they share is sealed before the command exists).
OUT=$(hr ssh.yaml a.audit -- sh -c 'grep -E " /etc/(hosts|ssh/ssh_config) " /proc/self/mountinfo')
expect "the sandbox's /etc/hosts and ssh_config: read-only mounts, read-only superblock" 2 \
	"$(awk '$6 ~ /^ro(,|$)/ && $NF ~ /^ro(,|$)/' <<<"$OUT" | wc -l)"
OUT=$(hr ssh.yaml a.audit -- sh -c 'grep " /run " /proc/self/mountinfo')
expect "the sandbox's /run (where a linked resolv.conf is written): read-only superblock" 1 \
	"$(awk '$5 == "/run" && $6 ~ /^ro(,|$)/ && $NF ~ /^ro(,|$)/' <<<"$OUT" | wc -l)"
OUT=$(hr ssh.yaml a.audit -- sh -c "git clone -q 'ssh://$ME@denied.test:$PORT$S/repo.git' d 2>&1; echo rc=\$?")
expect_match "a denied host: ssh shows halo-run's reason" "halo-run: egress denied: denied.test:$PORT \(default deny\)" "$OUT"
expect_match "... and git fails" "rc=128" "$OUT"
# Issue 24: in ssh's own words (the disconnect halo-run connect sends), once, not a
# closed pipe.
expect_match "a denied host: OpenSSH's Received disconnect carries the reason" \
	"Received disconnect from .*: halo-run: egress denied: denied.test:$PORT \(default deny\)" "$OUT"
expect "... said once" 1 "$(grep -c "egress denied: denied.test" <<<"$OUT")"
expect "... no kex_exchange_identification failure" 0 "$(grep -c kex_exchange_identification <<<"$OUT")"

# Issue 24: GIT_SSH_COMMAND from the caller's environment passes (no env.set); a key
# it names under the host's /tmp (not the workspace) gets a line saying why.
printf 'egress:\n  default: deny\n  allowedDomains: ["git.test:%s"]\n  allowPrivate: [127.0.0.1/32]\n' \
	"$PORT" >"$W/plain.yaml"
chmod a+r "$W/plain.yaml"
rm -rf "$WS/clone3"
OUT=$(GIT_SSH_COMMAND="ssh -i $WS/key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR" \
	hr plain.yaml a.audit -- sh -c "git clone -q '$URL' clone3 && cat clone3/f")
expect "GIT_SSH_COMMAND from the caller's environment: git clone over ssh" "hello over ssh" "$OUT"
cp "$WS/key" "$W/key-outside"
OUT=$(GIT_SSH="/usr/bin/ssh" GIT_SSH_COMMAND="ssh -i $W/key-outside -o BatchMode=yes" \
	hr plain.yaml a.audit -- sh -c 'echo "$GIT_SSH"')
expect "GIT_SSH passes" /usr/bin/ssh "$OUT"
expect_match "an identity file under the host's /tmp: a line says the sandbox cannot see it" \
	"^halo-run: GIT_SSH_COMMAND names the identity file $W/key-outside, which the sandbox cannot see" "$(cat "$W/err")"
OUT=$(hr ssh.yaml a.audit -- sh -c "ssh -i $WS/key -o BatchMode=yes -p 1 git.test true 2>&1; echo rc=\$?")
expect_match "the allowed host on another port: refused (the entry names a port)" \
	"halo-run: egress denied: git.test:1 \(default deny\).*rc=255" "$(tr '\n' ' ' <<<"$OUT")"
# ssh-agent through sandbox.unixSockets: no key file named, the agent holds the key;
# the sandbox's ssh_config names the socket (SSH_AUTH_SOCK itself is never passed).
if command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null; then
	AGENT="$W/agent.sock"
	eval "$(ssh-agent -a "$AGENT" -s)" >/dev/null
	ssh-add -q "$WS/key" 2>/dev/null
	cat >"$W/agent.yaml" <<EOF
sandbox:
  unixSockets: ["$AGENT"]
egress:
  default: deny
  allowedDomains: ["git.test:$PORT"]
  allowPrivate: [127.0.0.1/32]
env:
  set:
    GIT_SSH_COMMAND: "ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
EOF
	chmod a+r "$W/agent.yaml"
	rm -rf "$WS/clone2"
	OUT=$(SSH_AUTH_SOCK="$AGENT" hr agent.yaml a.audit -- sh -c "git clone -q '$URL' clone2 && cat clone2/f")
	expect "git clone over ssh with the key in ssh-agent (sandbox.unixSockets)" "hello over ssh" "$OUT"
	[ "$OUT" = "hello over ssh" ] || echo "# halo: $(head -c 600 "$W/err")"
	kill "$SSH_AGENT_PID" 2>/dev/null
else
	skip "ssh-agent row" "no ssh-agent"
fi
OUT=$(cd "$WS" && "$HALO" --dry-run --policy "$W/ssh.yaml" -- true 2>&1)
expect_match "--dry-run lists the sandbox's ssh_config" "ssh client configuration.*" "$OUT"
OUT=$("$HALO" connect git.test 2>&1; echo "rc=$?")
expect_match "connect needs HOST PORT" "connect takes HOST PORT.*rc=125" "$(tr '\n' ' ' <<<"$OUT")"
finish
