#!/bin/bash
# Integrity of what the sandbox leaves behind (issue 10, items 1-3), each row a case
# that failed before: a hook planted by moving .git aside runs on the host's next
# commit; missing guard targets (.codex, .claude/settings.json, .mcp.json,
# .vscode/tasks.json, .gitmodules, .ripgreprc, .envrc, .git/hooks, .git/commondir) can
# be created; .gitmodules and .ripgreprc are not guarded at all; a dangling guard link
# can be completed; the parent of a protected file can be renamed; a protected path
# given through a symlink leaves the link removable; a symlink in writableRoots is
# followed; a host unix socket outside /tmp and /run (here under a home in /var/tmp)
# accepts connections. And what must keep working: git add and commit inside, a
# socket the policy names in sandbox.unixSockets, nothing left in the workspace.
#
# Host-side checks run after the sandbox is gone: a real `git commit` on the host,
# with a hook that would leave a marker if it ran.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
HOMEDIR=$(mktemp -d /var/tmp/halo-int-home.XXXXXX) || exit 1
WR=$(mktemp -d /var/tmp/halo-int-wr.XXXXXX) || exit 1
SOCKPID=
cleanup() {
	[ -n "$SOCKPID" ] && kill "$SOCKPID" 2>/dev/null
	rm -rf "$HOMEDIR" "$WR"
}
trap cleanup EXIT
git_host() { git -c user.name=host -c user.email=host@example.test -c init.defaultBranch=main "$@"; }

# in_ws DIR POLICY CMD: run `sh -c CMD` in the sandbox with DIR as the workspace.
in_ws() {
	local dir=$1 pol=$2
	shift 2
	case $pol in /*) ;; *) pol=$TMPDIR/$pol ;; esac
	OUT=$(cd "$dir" && timeout -k 2 30 "$HALO" --policy "$pol" -- sh -c "$1" 2>"$E" </dev/null)
	RC=$?
	ERR=$(cat "$E")
}
printf 'sandbox: {mode: workspace-write}\n' >plain.yaml
mkdir -p sw # a plain workspace for the rows that are not about its content

# A fresh repository with one commit and a hook marker outside the tree.
new_repo() { # DIR
	rm -rf "$1"
	mkdir -p "$1"
	(cd "$1" && git_host init -q . && echo one >f && git_host add f && git_host commit -qm one)
}
MARK="$TMPDIR/hook-ran"
HOOK="printf '#!/bin/sh\ntouch $MARK\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"

# ---------------------------------------------------------------- 1. the guard pinned
new_repo r1
in_ws r1 plain.yaml "mv .git .git-old && git init -q && $HOOK"
rm -f "$MARK"
(cd r1 && git_host commit -q --allow-empty -m host >/dev/null 2>&1)
expect "mv .git .git-old && git init, hook written: no hook ran at the host's next git commit" \
	absent "$([ -e "$MARK" ] && echo present || echo absent)"
expect "... and the repository is the original one (its first commit is there)" one \
	"$(cd r1 && git log --format=%s | tail -1)"
expect "... and nothing was moved aside" absent "$([ -e r1/.git-old ] && echo present || echo absent)"
expect_match "... refused inside: .git cannot be moved (a mount point)" "busy|Busy" "$ERR"

new_repo r2
in_ws r2 plain.yaml "echo two >> f && git add f && git -c user.name=in -c user.email=in@example.test commit -qm two"
expect "git add and commit inside still work (objects, refs, index writable)" two \
	"$(cd r2 && git log -1 --format=%s)"

new_repo r3
rm -rf r3/.git/hooks
for t in .codex/config.toml .claude/settings.json .mcp.json .vscode/tasks.json .gitmodules \
	.ripgreprc .envrc .cursor/rules .gemini/settings.json; do
	in_ws r3 plain.yaml "mkdir -p \$(dirname $t) && echo planted > $t"
	top=${t%%/*}
	if [ "$RC" -ne 0 ] && [ ! -e "r3/$top" ]; then
		ok "missing guard target $t: cannot be created inside, nothing on the host"
	else
		fail "missing guard target $t" "rc=$RC err=[$ERR] host: $(ls -a r3 | tr '\n' ' ')"
	fi
done
in_ws r3 plain.yaml "mkdir .git/hooks && $HOOK"
rm -f "$MARK"
(cd r3 && git_host commit -q --allow-empty -m host >/dev/null 2>&1)
expect "a repository without .git/hooks: the directory cannot be made, no hook ran" \
	"absent absent" "$([ -e r3/.git/hooks ] && echo present || echo absent) \
$([ -e "$MARK" ] && echo present || echo absent)"
mkdir -p evil/hooks && printf '#!/bin/sh\ntouch %s\n' "$MARK" >evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit
in_ws r3 plain.yaml "echo $TMPDIR/evil > .git/commondir"
expect "a .git/commondir (config and hooks elsewhere) cannot be planted" absent \
	"$([ -e r3/.git/commondir ] && echo present || echo absent)"
expect "the workspace holds no placeholder afterwards (nothing halo-run made)" ".git f" \
	"$(cd r3 && ls -A | tr '\n' ' ' | sed 's/ $//')"

new_repo r4
echo '[submodule "x"]' >r4/.gitmodules
echo '--hidden' >r4/.ripgreprc
in_ws r4 plain.yaml "echo '	url = ../evil' >> .gitmodules; echo '--pre=sh' >> .ripgreprc"
expect ".gitmodules and .ripgreprc are guarded: unchanged" "1 1" \
	"$(wc -l <r4/.gitmodules) $(wc -l <r4/.ripgreprc)"

new_repo r5
ln -s build/rg r5/.ripgreprc
in_ws r5 plain.yaml "mkdir -p build && echo '--pre=sh' > .ripgreprc"
expect "a guard target that is a dangling link the command could complete: launch refused (125)" \
	125 "$RC"
expect_match "... naming the link and what is missing" "ripgreprc leads to .*build, which does not exist" "$ERR"

# A repository the command makes during the run is allowed, but its hooks and the
# config keys that run programs are held: each way in, then a real host-side commit
# and config read in it.
new_repo r6
R6_ATTACKS='git init -q sub && cd sub
git config core.hooksPath /tmp; echo "hookspath=$?"
git config alias.st "!sh"; echo "alias=$?"
printf "#!/bin/sh\ntouch '"$MARK"'\n" > .git/hooks/pre-commit; echo "hook=$?"
mv .git/hooks/pre-commit.sample .git/hooks/pre-commit; echo "sample-renamed=$?"
python3 -c "open(\".git/config\",\"a\").write(\"[core]\\n\\tfsmonitor = x\\n\")"; echo "append=$?"
python3 -c "f=open(\".git/config\",\"r+\"); f.seek(0,2); f.write(\"[core]\\n\\tpager = x\\n\")"; echo "rplus=$?"
exec 3<.git/config; (echo "[core] editor = x" >> /proc/self/fd/3); echo "magic-link=$?"; exec 3<&-
printf "[core]\n\tsshCommand = x\n" > /tmp/c; cp /tmp/c .git/config.lock; mv .git/config.lock .git/config; echo "lock-rename=$?"; rm -f .git/config.lock
mkdir -p ../evil/hooks && printf "#!/bin/sh\n" > ../evil/hooks/pre-commit && mkdir ../evil/objects && mkdir ../evil/refs; echo "prestaged=$?"
git config user.email in@example.test; echo "user=$?"
git remote add origin https://git.example.test/r.git; echo "remote=$?"
echo x > f && git add f && git -c user.name=in commit -qm in; echo "commit=$?"'
in_ws r6 plain.yaml "$R6_ATTACKS"
for w in hookspath alias hook sample-renamed append rplus magic-link lock-rename prestaged; do
	expect_match "a repository made inside: $w refused" "^$w=[1-9]" "$(printf '%s\n' "$OUT" | grep "^$w=")"
done
for w in user remote commit; do
	expect "a repository made inside: $w still works" "$w=0" "$(printf '%s\n' "$OUT" | grep "^$w=")"
done
expect_match "... the refusals are named at the end" "refused [0-9]+ changes to git hooks or config" "$ERR"
rm -f "$MARK"
(cd r6/sub && git_host commit -q --allow-empty -m host >/dev/null 2>&1)
expect "... the host's next commit there runs no hook" absent \
	"$([ -e "$MARK" ] && echo present || echo absent)"
expect "... its config holds no key that runs a program" "" \
	"$(git -C r6/sub config --local --list | grep -iE 'hookspath|alias|fsmonitor|pager|editor|sshcommand')"
expect "... and keeps what the command set legitimately" "in@example.test https://git.example.test/r.git" \
	"$(git -C r6/sub config user.email) $(git -C r6/sub config remote.origin.url)"
expect "... the pre-staged directory never became a git directory" absent \
	"$([ -e r6/evil/refs ] && echo present || echo absent)"
# (review) A directory named .git is taken for a git directory before it is one: the
# host's `git init` there later completes it and keeps what it holds, and its next
# commit ran a hook planted by mkdir -p proj/.git/hooks. A directory renamed to .git
# and a .git symlink are checked the same way.
new_repo r6b
R6B_ATTACKS='mkdir -p proj/.git/hooks && printf "#!/bin/sh\ntouch '"$MARK"'\n" > proj/.git/hooks/pre-commit; echo "named=$?"
chmod +x proj/.git/hooks/pre-commit 2>/dev/null
mkdir -p st/hooks && printf "#!/bin/sh\ntouch '"$MARK"'\n" > st/hooks/pre-commit && chmod +x st/hooks/pre-commit && mkdir p2 && mv st p2/.git; echo "renamed=$?"
mkdir -p p3 && ln -s ../st p3/.git; echo "symlink=$?"
mkdir -p p4/.git/hooks && printf x > p4/.git/hooks/pre-commit.sample; echo "sample=$?"
mkdir -p p5/x/hooks && printf "#!/bin/sh\ntouch '"$MARK"'\n" > p5/x/hooks/pre-commit && mkdir p5/.git && python3 -c "
import ctypes, os, sys
r = ctypes.CDLL(None, use_errno=True).syscall(316, -100, b\"p5/.git\", -100, b\"p5/x\", 2)
sys.exit(0 if r == 0 else 1)"; echo "exchanged=$?"
mkdir -p ev/hooks p6/.git && printf "#!/bin/sh\ntouch '"$MARK"'\n" > ev/hooks/pre-commit && echo ../../ev > p6/.git/commondir; echo "commondir=$?"
mkdir -p p7/x && echo "ref: refs/heads/main" > p7/x/HEAD && echo ../../ev > p7/x/commondir && mv p7/x p7/.git; echo "commondir-renamed=$?"
mkdir -p p8 && ln -s ../ev p8/l && mv -T p8/l p8/.git; echo "link-renamed=$?"
mkdir -p p9 && ln -s ../ev p9/l && python3 -c "import os; os.link(\"p9/l\", \"p9/.git\", follow_symlinks=False)"; echo "hardlink=$?"'
in_ws r6b plain.yaml "$R6B_ATTACKS"
for w in named renamed symlink exchanged commondir commondir-renamed link-renamed hardlink; do
	if [ "$w" = exchanged ] && [ "$(uname -m)" != x86_64 ]; then
		skip "a directory named .git: exchanged refused" "renameat2's number is x86-64's here"
		continue
	fi
	expect_match "a directory named .git: $w refused" "^$w=[1-9]" "$(printf '%s\n' "$OUT" | grep "^$w=")"
done
expect "... a sample hook still made (git init's templates)" "sample=0" "$(printf '%s\n' "$OUT" | grep "^sample=")"
rm -f "$MARK"
for d in proj p2 p5 p6 p7 p8 p9; do
	[ -d "r6b/$d" ] && (cd "r6b/$d" && git init -q . && git_host commit -q --allow-empty -m host >/dev/null 2>&1)
done
expect "... the host's git init and commit there run no hook" absent \
	"$([ -e "$MARK" ] && echo present || echo absent)"

# Found by review: a hard link to the config, a socket that completes a git
# directory, init's own /proc, lfs transfer agents, core.worktree outside the
# superproject. Each refused inside, each checked on the host afterwards.
new_repo r7
mkdir -p "$TMPDIR/victim"
R7_ATTACKS='git init -q sub && cd sub
ln .git/config l 2>/dev/null; echo "hardlink=$?"
git config lfs.standalonetransferagent evil 2>/dev/null; echo "lfs=$?"
git config core.worktree '"$TMPDIR"'/victim 2>/dev/null; echo "worktree=$?"
cd ..; mkdir -p g/hooks g/objects && printf "#!/bin/sh\ntouch '"$MARK"'\n" > g/hooks/pre-commit && chmod +x g/hooks/pre-commit && echo "ref: refs/heads/main" > g/HEAD
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"g/refs\")" 2>/dev/null; echo "socket-trigger=$?"
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"ok.sock\"); s.listen(); print(\"bind-ok\")"
python3 -c "import os; os.open(\"/proc/1/environ\", os.O_RDONLY | os.O_CREAT)" 2>/dev/null; echo "proc1=$?"
git init -q sub2 && rm sub2/.git/config && printf "[core]\n\tfsmonitor = touch '"$MARK"'\n" > sub2/.git/config; echo "in-place-create=$?"'
HALO_IT_SECRET=planted in_ws r7 plain.yaml "$R7_ATTACKS"
for w in hardlink lfs worktree socket-trigger proc1; do
	expect_match "review: $w refused" "^$w=[1-9]" "$(printf '%s\n' "$OUT" | grep "^$w=")"
done
expect_match "review: a plain unix socket still binds" "^bind-ok" "$OUT"
expect "review: a config created in place (libgit2 style) is made, empty" "in-place-create=0 0" \
	"$(printf '%s\n' "$OUT" | grep "^in-place-create=") $(wc -c <r7/sub2/.git/config)"
expect "... the host's config has none of it" "" \
	"$(git -C r7/sub config --local --list | grep -iE 'lfs|worktree')"
rm -f "$MARK"
(cd r7 && git_host --git-dir=g --work-tree=. commit -q --allow-empty -m host >/dev/null 2>&1)
expect "... the half-made git directory ran no hook on the host" absent \
	"$([ -e "$MARK" ] && echo present || echo absent)"

# ---------------------------------------------------------------- 2. renames and symlinks
mkdir -p m1/conf m1/real-keys
echo SECRET=1 >m1/conf/.env
echo KEY >m1/real-keys/id
ln -s real-keys m1/keys
printf 'sandbox:\n  protectedPaths: ["%s/m1/keys", ".env*"]\n' "$TMPDIR" >m1.yaml
in_ws m1 m1.yaml "mv conf conf2 && mkdir conf && echo SECRET=planted > conf/.env"
expect "the parent of a protected file cannot be renamed (nothing planted at its name)" \
	"SECRET=1 absent" "$(cat m1/conf/.env) $([ -e m1/conf2 ] && echo present || echo absent)"
in_ws m1 m1.yaml "rm keys || true; rm -rf keys; mkdir keys; echo planted > keys/id"
expect "a protected path given through a symlink: the link is neither removed nor replaced" \
	"real-keys KEY" "$(readlink m1/keys) $(cat m1/real-keys/id)"
in_ws m1 m1.yaml "cat keys/id; cat real-keys/id"
expect "... and neither the link nor its target is readable" "" "$OUT"

mkdir -p "$WR/real"
ln -s "$WR/real" "$WR/link"
printf 'sandbox:\n  writableRoots: ["%s/link"]\n' "$WR" >wr.yaml
in_ws "$TMPDIR/sw" wr.yaml "touch $WR/link/x"
expect "a symlink in writableRoots: the launch is refused (125)" 125 "$RC"
expect_match "... naming the link and its target" "writableRoots.*link.* is a symlink \(to .*real.?\)" "$ERR"
VOUT=$("$HALO" validate "$TMPDIR/wr.yaml" 2>&1)
expect "... and halo-run validate refuses it (exit 1)" 1 "$?"
expect_match "... naming it" "is a symlink" "$VOUT"
expect "... nothing was written through it" absent "$([ -e "$WR/real/x" ] && echo present || echo absent)"

# ---------------------------------------------------------------- 3. host sockets
mkdir -p "$HOMEDIR/.svc"
SOCK="$HOMEDIR/.svc/agent.sock"
python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); s.settimeout(60)
end=time.time()+60
while time.time()<end:
    try:
        c,_=s.accept(); c.sendall(b"hello"); c.close()
    except OSError: break' "$SOCK" &
SOCKPID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
CONNECT='import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(3)
try:
    s.connect(sys.argv[1]); print("connected", s.recv(5).decode())
except OSError as e: print("refused", e.errno)'
expect "host socket under a home in /var/tmp: reachable on the host (test setup)" "connected hello" \
	"$(python3 -c "$CONNECT" "$SOCK" 2>&1)"
in_ws "$TMPDIR/sw" plain.yaml "python3 -c '$CONNECT' '$SOCK'"
expect_match "... refused inside (masked: found in the host's /proc/net/unix)" "^refused" "$OUT"
printf 'sandbox:\n  unixSockets: ["%s"]\n' "$SOCK" >sock.yaml
in_ws "$TMPDIR/sw" sock.yaml "python3 -c '$CONNECT' '$SOCK'"
expect "... named in sandbox.unixSockets: reachable inside" "connected hello" "$OUT"
expect_match "... with a warning at launch" "warning: sandbox.unixSockets: .*agent.sock is reachable" "$ERR"
printf 'sandbox:\n  protectedPaths: ["%s/.svc"]\n  unixSockets: ["%s"]\n' "$HOMEDIR" "$SOCK" >sock2.yaml
in_ws "$TMPDIR/sw" sock2.yaml "python3 -c '$CONNECT' '$SOCK'; ls $HOMEDIR/.svc 2>/dev/null | wc -l"
expect "... even inside a protected directory, which stays unlistable" "connected hello 0" \
	"$(echo $OUT)"
expect_match "doctor says what this kernel's Landlock does for pathname sockets" \
	"pathname unix sockets" "$("$HALO" doctor 2>&1)"
finish
