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

. "$IT/sshd_lib.sh"
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
