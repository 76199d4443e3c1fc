#!/bin/bash
# Workflow: a 3 MB `git push` over plain http:// under halo-run, to `git http-backend`
# behind wf_origin.py on the host's loopback (gitwf.test), the default policy plus only
# gitwf.test allowed: clone, commit 3 MB of incompressible data, push. git sends a push
# larger than http.postBuffer (1 MiB) as a chunked request body, so this row needs a
# proxy that forwards chunked uploads (issue 9).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

if ! need git; then
	skip "git push workflow" "$MISSING is not installed"
	finish
	exit
fi
start_registry gitwf 0
P=$(wait_port gitwf)
wf_policy git.yaml gitwf.test

G=(git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main)
mkdir -p "$W/gitwf.root/git"
"${G[@]}" init -q "$W/src"
echo "pushed through the sandbox's proxy" >"$W/src/README"
"${G[@]}" -C "$W/src" add README && "${G[@]}" -C "$W/src" commit -q -m init
git clone -q --bare "$W/src" "$W/gitwf.root/git/demo.git"
git -C "$W/gitwf.root/git/demo.git" config http.receivepack true
printf '[safe]\n\tdirectory = *\n' >"$W/gitwf.root/gitconfig"
head -c 3145728 /dev/urandom >"$WS/blob.bin"
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"

GI="git -c user.name=t -c user.email=t@example.invalid -c safe.directory=*"
row "git clone over plain http (git http-backend)" git.yaml clone.log "^pushed through" \
	sh -c "timeout 60 $GI clone -q http://gitwf.test:$P/git/demo.git demo && cat demo/README"
row "git push of a 3 MB commit over plain http (a chunked upload)" git.yaml push.log "^pushed$" \
	sh -c "cd demo && cp ../blob.bin . && $GI add blob.bin && $GI commit -q -m blob &&
		timeout 60 $GI push -q origin HEAD && echo pushed"
push_rc=$RC
size=$(git -C "$W/gitwf.root/git/demo.git" cat-file -s main:blob.bin 2>/dev/null)
expect "git push: the 3 MB blob is in the host's repository" 3145728 "${size:-none}"
[ "$push_rc" = 0 ] || diag "the same push with http.postBuffer=16M (Content-Length, not chunked)" \
	git.yaml push2.log sh -c "cd demo && timeout 60 $GI -c http.postBuffer=16777216 push -q origin HEAD"
finish
