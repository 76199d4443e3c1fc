# An sshd on the host's loopback for the git-over-ssh scripts (t_ssh.sh, t_learn_ssh.sh),
# sourced after lib.sh and egress_lib.sh ($W, $WS, $AS, pids): the invoking user's, on
# a port the kernel picks (PORT), with its own host key and authorized_keys, serving
# the bare repository $S/repo.git (branch main, one file f); the user's key is
# $WS/key. Skips the whole script when openssh-server, openssh-client or git is
# missing. HALO becomes a copy of the binary in the workspace (ssh runs `halo-run
# connect` inside the sandbox, where the stage directory in /tmp is not seen).
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
