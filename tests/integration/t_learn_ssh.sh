#!/bin/bash
# halo-run learn with git over ssh (issue 27): sshd on the host's loopback (the set-up
# of t_ssh.sh), named git.test; git clone ssh://git.test:PORT/... through the
# sandbox's ssh route (halo-run connect, a CONNECT) under a policy that allows
# nothing learns git.test:PORT, and the learned policy (default deny) clones again
# while other.test stays denied.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"
. "$IT/learn_lib.sh"

SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v git >/dev/null; then
	skip "git over ssh rows" "needs openssh-server, openssh-client and git (apt-get install openssh-server)"
	finish
	exit
fi
S="$W/sshd"
mkdir -p "$S"
ssh-keygen -q -t ed25519 -N '' -f "$S/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$WS/key" # the user's key, in the workspace
cp "$WS/key.pub" "$S/authorized_keys"
git init -q --bare "$S/repo.git"
git --git-dir="$S/repo.git" symbolic-ref HEAD refs/heads/main
git init -q "$W/seed"
echo "hello over ssh" >"$W/seed/f"
git -C "$W/seed" add f
git -C "$W/seed" -c user.email=t@t -c user.name=t commit -qm seed
git -C "$W/seed" push -q "$S/repo.git" HEAD:refs/heads/main
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ME=$(id -un 2>/dev/null || echo nobody)
cat >"$S/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $S/hostkey
AuthorizedKeysFile $S/authorized_keys
PidFile $S/sshd.pid
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
EOF
# The sshd runs in a mount namespace of its own: as root, with a private /run for its
# privilege-separation directory; as the user, in a user namespace whose passwd gives
# the user a shell (nobody's is nologin, and sshd runs commands through it) and whose
# shadow does not lock the account.
sed "s#^\($ME:[^:]*:[^:]*:[^:]*:[^:]*:\)[^:]*:.*#\1$W:/bin/sh#" /etc/passwd >"$S/passwd"
printf '%s::19000:0:99999:7:::\n' "$ME" >"$S/shadow" # not locked (keys only: no password auth)
if [ "$AS" = root ]; then
	SW=(unshare --mount --propagation private sh -c \
		'mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && exec "$@"' sh)
else
	SW=(unshare --user --map-current-user --mount --propagation private --keep-caps sh -c \
		'mount --bind "$0/passwd" /etc/passwd && mount --bind "$0/shadow" /etc/shadow && exec "$@"' "$S")
fi
chmod -R a+rX "$W"
chmod 600 "$WS/key" "$S/hostkey"
timeout 280 "${SW[@]}" "$SSHD" -D -e -f "$S/sshd_config" 2>"$S/sshd.log" &
pids+=($!)
for _ in $(seq 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	sleep 0.1
done

# ssh runs `halo-run connect` inside: the binary must be visible there, and this
# run's stage directory lies in /tmp, which is the sandbox's own. A copy in the
# workspace stands in for an installed /usr/bin/halo-run.
mkdir -p "$WS/bin"
cp "$HALO" "$WS/bin/halo-run"
HALO="$WS/bin/halo-run"
KEYOPTS="ssh -i $WS/key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
cat >"$W/sshbase.yaml" <<EOF
egress:
  default: deny
  allowPrivate: [127.0.0.1/32]
env:
  set:
    GIT_SSH_COMMAND: "$KEYOPTS"
EOF
chmod a+r "$W/sshbase.yaml"
export SHELL=/bin/sh
URL="ssh://$ME@git.test:$PORT$S/repo.git"
# a fresh directory each time: a clone's hooks are guarded (not removable inside)
CL="d=\$(mktemp -d -p . ssh.XXXXXX) && timeout 60 git clone -q '$URL' \$d/c && cat \$d/c/f"
lr sshbase.yaml ssh.yaml -- sh -c "$CL"
expect "git clone over ssh passes under learn" "0 hello over ssh" "$RC $(cat "$W/ssh.yaml.stdout")"
[ "$RC" = 0 ] || echo "# sshd: $(tail -3 "$S/sshd.log" | tr '\n' ' ') halo: $(tail -c 400 "$W/ssh.yaml.err")"
expect_match "git.test:PORT is learned (connect)" "^    - \"git.test:$PORT\"  # connect port $PORT" \
	"$(cat "$W/ssh.yaml" 2>/dev/null)"
expect_match "env.set is kept in the learned policy" "GIT_SSH_COMMAND: \"ssh -i " "$(cat "$W/ssh.yaml" 2>/dev/null)"
[ -f "$W/ssh.yaml" ] && chmod a+r "$W/ssh.yaml"
OUT=$(hr ssh.yaml s2.audit -- sh -c "$CL")
expect "git clone over ssh under the learned policy (default deny)" "hello over ssh" "$OUT"
OUT=$(hr ssh.yaml s3.audit -- sh -c "timeout 60 git clone -q 'ssh://$ME@other.test:$PORT$S/repo.git' d3 2>&1; echo rc=\$?")
expect_match "other.test stays denied under the learned policy" "egress denied: other.test:$PORT \(default deny\)" "$OUT"
finish
