#!/bin/bash
# halo-run hook's file tools judge a path by what it is, with the sandbox's own path
# facts (policy/pathfacts.c, policy/gitdir.c): a corpus of real Claude Code PreToolUse
# and Codex apply_patch events (tests/integration/hook_file_events.jsonl), a bare repository
# end to end (the hook refuses, the sandbox refuses, the host's git push runs no planted
# hook), Grep/Glob with protected globs, and a case variant of the workspace.
. "$IT/lib.sh"
# sbx_ok ROW: whether $out is a sandboxed run's (its command ends in "echo done"); else
# ROW is skipped, saying why (no namespaces here).
sbx_ok() {
	if [ -n "$(grep -iE 'namespace|not permitted|unavailable' <<<"$out")" ] && ! grep -q done <<<"$out"; then
		skip "$1" "no sandbox here: $(head -c 200 <<<"$out")"
		return 1
	fi
}


# The workspace lies outside /tmp (a scratch directory every file tool may write), as
# /var/tmp/arws would; .../ARWS beside it is another directory on Linux.
base=$(mktemp -d /var/tmp/halo-it-hook.XXXXXX) || exit 1
trap 'rm -rf "$base"' EXIT
ws=$base/arws
mkdir -p "$ws/src" "$ws/config" "$ws/.git/hooks" "$HOME/.ssh" "$HOME/.aws" "$base/ARWS"
echo key >"$HOME/.ssh/id_rsa"
echo 'int main;' >"$ws/src/main.c"
echo A=1 >"$ws/.env"
ln -s "$HOME/.ssh" "$ws/keys"
if ! command -v git >/dev/null; then
	skip "hook file tools" "git is not installed"
	finish
	exit
fi
git init -q --bare "$ws/srv.git"
ln -s "$ws/srv.git/hooks" "$ws/hk"
# A linked work tree's git directory where no .git names it, and a gitdir: file.
mkdir -p "$ws/wtgit" "$ws/sub"
echo "ref: refs/heads/main" >"$ws/wtgit/HEAD"
echo "../srv.git" >"$ws/wtgit/commondir"
echo "gitdir: ../wtgit" >"$ws/sub/.git"
pol=$TMPDIR/policy.yaml
printf 'sandbox:\n  mode: workspace-write\n' >"$pol"

# The corpus: every event with its placeholders filled, through the real binary.
corpus=$IT/hook_file_events.jsonl
n=0 bad=0
while IFS= read -r line; do
	n=$((n + 1))
	read -r want harness note ev < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
e = json.dumps(r["event"]).replace("@WS@", sys.argv[2]).replace("@HOME@", sys.argv[3])
print(r["want"], r["harness"], r["note"].replace(" ", "_"), e)' "$line" "$ws" "$HOME")
	err=$(printf '%s' "$ev" | "$HALO" hook --policy "$pol" --harness "$harness" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "corpus $n ${note//_/ }" "want exit $want, got $rc: $err"
		bad=$((bad + 1))
	fi
done <"$corpus"
expect "corpus: at least 60 file-tool events" 1 "$((n >= 60))"
expect "corpus: every event judged as the sandbox would" "0 of $n" "$bad of $n"

# hook NAME WANT_RC TOOL INPUT_JSON [CWD]
hook() {
	local ev err rc
	ev=$(python3 -c 'import json,sys; print(json.dumps({"session_id":"s","transcript_path":"/tmp/t",
	"cwd":sys.argv[3],"hook_event_name":"PreToolUse","tool_name":sys.argv[1],
	"tool_input":json.loads(sys.argv[2])}))' "$3" "$4" "${5:-$ws}")
	err=$(printf '%s' "$ev" | "$HALO" hook --policy "$pol" 2>&1 >/dev/null)
	rc=$?
	expect "$1: exit" "$2" "$rc"
	[ "$2" = 2 ] && expect_match "$1: says why" 'halo-run: blocked' "$err"
}

# The bare repository end to end.
hook "Write a bare repository's hooks/post-receive" 2 Write \
	"{\"file_path\":\"$ws/srv.git/hooks/post-receive\",\"content\":\"#!/bin/sh\\ntouch $TMPDIR/planted\\n\"}"
hook "Write it through a symlink" 2 Write "{\"file_path\":\"$ws/hk/post-receive\",\"content\":\"x\"}"
hook "Write a linked git directory's config.worktree (gitdir: file)" 2 Write \
	"{\"file_path\":\"$ws/wtgit/config.worktree\",\"content\":\"x\"}"
hook "Write the gitdir: file itself" 2 Write "{\"file_path\":\"$ws/sub/.git\",\"content\":\"gitdir: /x\"}"
expect "after the hook refused: nothing planted" "" "$(ls "$ws/srv.git/hooks" | grep -v '\.sample$')"
# The sandbox refuses the same write (the bare repository has no config here: told by
# HEAD, objects and refs alone).
rm -f "$ws/srv.git/config"
chmod -R a+rwX "$ws" 2>/dev/null
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet -- sh -c \
	"printf '#!/bin/sh\ntouch $TMPDIR/planted\n' >srv.git/hooks/post-receive && chmod +x srv.git/hooks/post-receive && echo WROTE" 2>&1)
rc=$?
if [ $rc = 125 ] && grep -qiE 'namespace|not permitted|unavailable' <<<"$out"; then
	skip "sandboxed write into a bare repository's hooks" "no sandbox here: $(head -c 200 <<<"$out")"
else
	expect "sandboxed write into the bare repository's hooks: refused" "" "$(grep WROTE <<<"$out")"
	# A linked work tree's git directory, where no .git names it: its commondir says
	# where hooks and config come from (today's scan knew only bare repositories with
	# a config, and no commondir).
	out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet -- sh -c \
		"echo $TMPDIR/evil >wtgit/commondir && echo WROTE" 2>&1)
	expect "sandboxed write to a linked git directory's commondir: refused" "" "$(grep WROTE <<<"$out")"
	expect "the commondir is unchanged" "../srv.git" "$(cat "$ws/wtgit/commondir")"
	git init -q "$TMPDIR/client" && cd "$TMPDIR/client" &&
		git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
		git push -q "$ws/srv.git" HEAD:refs/heads/main 2>/dev/null
	expect "the host's git push runs no planted hook" "no" "$([ -e "$TMPDIR/planted" ] && echo yes || echo no)"
	cd "$TMPDIR" || exit 1
fi

# Grep and Glob.
hook "Grep over the workspace with glob .env*" 2 Grep "{\"pattern\":\"A\",\"path\":\"$ws\",\"glob\":\".env*\"}"
hook "Glob **/.env*" 2 Glob '{"pattern":"**/.env*"}'
hook "Grep over the home for .ssh/*" 2 Grep "{\"pattern\":\"BEGIN\",\"path\":\"$HOME\",\"glob\":\".ssh/*\"}"
hook "Glob **/*.c (control)" 0 Glob '{"pattern":"**/*.c"}'
# A protected path that is not hidden: ripgrep walks into it, glob or none (pathreview).
mkdir -p "$HOME/vault" && echo s >"$HOME/vault/token.txt"
printf 'sandbox:\n  mode: workspace-write\n  protectedPaths: [~/vault]\n' >"$TMPDIR/vault.yaml"
for tool in Grep Glob; do
	ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"hook_event_name":"PreToolUse",
	"tool_name":sys.argv[2],"tool_input":{"pattern":"**/*.txt" if sys.argv[2]=="Glob" else "s","path":sys.argv[3]}}))' "$ws" "$tool" "$HOME")
	printf '%s' "$ev" | "$HALO" hook --policy "$pol" --policy "$TMPDIR/vault.yaml" 2>/dev/null
	expect "$tool over the home holding ~/vault (not hidden): blocked" 2 "$?"
done
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Grep","tool_input":{"pattern":"s","path":sys.argv[1],"glob":"*.c"}}))' "$ws")
printf '%s' "$ev" | "$HALO" hook --policy "$pol" --policy "$TMPDIR/vault.yaml" 2>/dev/null
expect "Grep *.c over the workspace with ~/vault protected (control)" 0 "$?"
# (review) Claude Code's Grep runs ripgrep with --hidden: with no glob it reads the
# workspace's .env; by a glob it leaves out, or a file type, it does not.
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Grep","tool_input":{"pattern":"s","path":sys.argv[1]}}))' "$ws")
OUT=$(printf '%s' "$ev" | "$HALO" hook --policy "$pol" 2>&1)
expect "Grep with no glob over a workspace holding .env: blocked" 2 "$?"
expect_match "... naming the file it would read" "in $ws would read $ws/\\.env" "$OUT"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Grep","tool_input":{"pattern":"s","path":" "+sys.argv[1]+" ","glob":"*.c, .env"}}))' "$ws")
printf '%s' "$ev" | "$HALO" hook --policy "$pol" >/dev/null 2>&1
expect "Grep glob '*.c, .env' (two ripgrep globs), path with white space: blocked" 2 "$?"
mkdir -p "$ws/hid/.cfg" && echo k >"$ws/hid/.cfg/.env.local" && echo x >"$ws/hid/a.c"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Grep","tool_input":{"pattern":"k","path":sys.argv[1]+"/hid"}}))' "$ws")
printf '%s' "$ev" | "$HALO" hook --policy "$pol" >/dev/null 2>&1
expect "Grep with no glob: a .env under a hidden directory is found (ripgrep --hidden reads it)" 2 "$?"
rm -rf "$ws/hid"
# (second review) A glob that meets a protected pattern only in the middle (*.local and
# .env*: .env.local), and a file inside a directory a protected pattern names, read by
# its own name (.envs/.production/.django by .django): blocked where such a file is.
mkdir -p "$ws/src" "$ws/.envs/.production" && echo k >"$ws/src/.env.local" && echo k >"$ws/.envs/.production/.django"
grep_ev() { python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Grep","tool_input":{"pattern":"k","path":sys.argv[2],"glob":sys.argv[3]} if sys.argv[3] else {"pattern":"k","path":sys.argv[2]}}))' "$ws" "$1" "$2" |
	"$HALO" hook --policy "$pol" >/dev/null 2>&1; echo $?; }
expect "Grep *.local where src/.env.local is: blocked" 2 "$(grep_ev "$ws" '*.local')"
expect "Grep .django where .envs/.production/.django is: blocked" 2 "$(grep_ev "$ws" .django)"
expect "Grep *.c there (control): allowed" 0 "$(grep_ev "$ws" '*.c')"
rm -rf "$ws/src/.env.local" "$ws/.envs"
# In a tree the launch walks, the hook asks the launch's own scan what it masks
# (runner/hook_walk.c): a protected name that is a symlink masks where it leads, so
# that file is refused by its own name too. The old hook judged names only: it let
# Grep *.txt and Read read data/real.txt, which the sandbox masks.
mkdir -p "$ws/data" && echo k >"$ws/data/real.txt" && ln -s data/real.txt "$ws/.env.linked"
expect "Grep *.txt where .env.linked leads to data/real.txt: blocked" 2 "$(grep_ev "$ws" '*.txt')"
expect "Grep *.txt in data/ itself: blocked" 2 "$(grep_ev "$ws/data" '*.txt')"
expect "Grep *.c there (control): allowed" 0 "$(grep_ev "$ws" '*.c')"
hook "Read the file a protected name links to" 2 Read "{\"file_path\":\"data/real.txt\"}"
hook "Edit it" 2 Edit "{\"file_path\":\"$ws/data/real.txt\",\"old_string\":\"k\",\"new_string\":\"j\"}"
hook "Read a file beside it (control)" 0 Read "{\"file_path\":\"$ws/src/main.c\"}"
# Gemini's read_many_files globs an include that is not there as written without case
# (review): DATA/real.txt reads data/real.txt.
mv "$ws/data/real.txt" "$ws/data/Über.txt" && ln -sfn "data/Über.txt" "$ws/.env.linked"
cp "$ws/data/Über.txt" "$ws/data/kit.txt" && ln -sfn "data/kit.txt" "$ws/.env.kit"
# (K is U+212A, which /iu folds to k: minimatch's POSIX class turns that on.)
for inc in DATA/Über.txt data/über.txt 'data/Kit[[:punct:]]txt' 'DATA/*.txt'; do
	ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"hook_event_name":"BeforeTool","tool_name":"read_many_files","tool_input":{"include":[sys.argv[2]]}}))' "$ws" "$inc")
	printf '%s' "$ev" | "$HALO" hook --harness gemini --policy "$pol" >/dev/null 2>&1
	expect "read_many_files $inc (a case variant of what the sandbox masks): blocked" 2 "$?"
done
# ... and from folders the launch does not walk, that hold what it masks: the
# workspace's parent, the folder a protected name links out into (review).
mkdir -p "$base/outside" && echo k >"$base/outside/secret.txt" && ln -s "$base/outside/secret.txt" "$ws/.env.out"
expect "Grep *.txt over the workspace's parent: blocked" 2 "$(grep_ev "$base" '*.txt')"
expect "Grep over the folder .env.out links into: blocked" 2 "$(grep_ev "$base/outside" '')"
rm -rf "$base/outside" "$ws/.env.out"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- cat data/real.txt 2>&1)
if [ -n "$(grep -iE 'namespace|not permitted|unavailable' <<<"$out")" ] && ! grep -q 'Permission denied' <<<"$out"; then
	skip "sandbox masks data/real.txt" "no sandbox here: $(head -c 200 <<<"$out")"
else
	expect "the sandbox masks it too (what the hook follows)" "" "$(grep -x k <<<"$out")"
fi
rm -rf "$ws/data" "$ws/.env.linked" "$ws/.env.kit"
# A tree whose first walk goes past the hook's bound (2 s; 1 ms here, by the test knob):
# the judgment by name stands, and the hook does not walk it again for 10 minutes
# (every file tool would wait that long): a note in the index's directory says so.
mkdir -p "$ws/data" && echo k >"$ws/data/real.txt" && ln -s data/real.txt "$ws/.env.linked"
python3 -c 'import os, sys
for d in range(200):
    p = os.path.join(sys.argv[1], "many", "d%03d" % d); os.makedirs(p)
    for f in range(50): open(os.path.join(p, "f%02d" % f), "w").close()' "$ws"
rd='{"file_path":"data/real.txt"}'
HALO_RUN_HOOK_SCAN_MS=1 hook "a walk past the bound: judged by name (allowed)" 0 Read "$rd"
expect "... and noted" 1 "$(ls "$HOME/.local/state/halo-run/index" | grep -c '^hook-bound-')"
hook "... the next call does not walk again (allowed)" 0 Read "$rd"
rm -f "$HOME/.local/state/halo-run/index"/hook-bound-*
hook "the note gone: walked, refused" 2 Read "$rd"
expect "... and no note left" 0 "$(ls "$HOME/.local/state/halo-run/index" | grep -c '^hook-bound-')"
rm -rf "$ws/data" "$ws/.env.linked" "$ws/many"
# ... and an allowRead carve-out in a mask stays readable (the sandbox shows it).
echo '[default]' >"$HOME/.aws/config" && echo k >"$HOME/.aws/credentials"
printf 'sandbox:\n  mode: workspace-write\n  allowRead: [~/.aws/config]\n' >"$TMPDIR/carve.yaml"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Read","tool_input":{"file_path":sys.argv[2]}}))' "$ws" "$HOME/.aws/config")
printf '%s' "$ev" | "$HALO" hook --policy "$TMPDIR/carve.yaml" >/dev/null 2>&1
expect "Read an allowRead carve-out inside a masked ~/.aws: allowed" 0 "$?"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Read","tool_input":{"file_path":sys.argv[2]}}))' "$ws" "$HOME/.aws/credentials")
printf '%s' "$ev" | "$HALO" hook --policy "$TMPDIR/carve.yaml" >/dev/null 2>&1
expect "Read ~/.aws/credentials beside it: blocked" 2 "$?"
rm -f "$HOME/.aws/config" "$HOME/.aws/credentials" "$TMPDIR/carve.yaml"
# (third review) What a .gitignore ignores is walked all the same: ripgrep's rules
# (.ignore, nested files, a glob that overrides them) decide what it reads, not ours.
gi=$(mktemp -d "$base/gi.XXXXXX")
mkdir -p "$gi/.git" "$gi/conf.local" "$gi/src" && echo k >"$gi/conf.local/.env.local" && echo x >"$gi/src/a.c"
printf 'conf.local/\n' >"$gi/.gitignore"
expect "Grep *.local where .gitignore names conf.local/ (ripgrep's glob overrides it): blocked" 2 "$(grep_ev "$gi" '*.local')"
expect "Grep with no glob there: blocked" 2 "$(grep_ev "$gi" '')"
expect "Grep *.c there (control): allowed" 0 "$(grep_ev "$gi" '*.c')"
# ... and the folder is walked where it leads (a symlink out of the repository).
mkdir -p "$base/other/vendor" && echo k >"$base/other/vendor/.env" && ln -s "$base/other" "$gi/data"
expect "Grep with no glob in a folder that is a symlink: walked where it leads, blocked" 2 "$(grep_ev "$gi/data" '')"
rm -rf "$gi" "$base/other"
hook "Grep *.c (control)" 0 Grep "{\"pattern\":\"main\",\"path\":\"$ws\",\"glob\":\"*.c\"}"

# Symlinks as the kernel walks them (pathreview): a dangling link is followed to the
# file a write creates, and ".." after a link is its target's parent, not the link's
# directory (the old hook judged "$ws/up/../x" as "$ws/x").
mkdir -p "$base/out/d"
ln -s "$HOME/.ssh/authorized_keys" "$ws/dangle"
ln -s "$base/out/new.txt" "$ws/dangle2"
ln -s "$base/out/d" "$ws/up"
ln -s "$HOME/.aws" "$ws/up2"
hook "Write through a dangling link into ~/.ssh" 2 Write "{\"file_path\":\"$ws/dangle\",\"content\":\"k\"}"
hook "Write through a dangling link out of the workspace" 2 Write \
	"{\"file_path\":\"dangle2\",\"content\":\"x\"}"
hook "Write .. after a link (the target's parent)" 2 Write \
	"{\"file_path\":\"$ws/up/../planted\",\"content\":\"x\"}"
hook "Read .. after a link into ~/.ssh" 2 Read "{\"file_path\":\"$ws/up2/../.ssh/id_rsa\"}"
hook "Grep .. after a link into ~/.ssh" 2 Grep "{\"pattern\":\"k\",\"path\":\"up2/../.ssh\"}"
hook "Write through a link inside the workspace (control)" 0 Write \
	"{\"file_path\":\"$ws/up/../../arws/src/y.c\",\"content\":\"x\"}"
# Codex trims a hunk header before reading it; a name after tabs or U+3000 counts.
hook "apply_patch: an indented Add File header" 2 apply_patch \
	"{\"command\":\"*** Begin Patch\\n  *** Add File: $HOME/.ssh/authorized_keys\\n+k\\n*** End Patch\\n\"}"
hook "apply_patch: a name with trailing white space" 2 apply_patch \
	"{\"command\":\"*** Begin Patch\\n*** Add File: .bashrc\\t\\u3000\\n+x\\n*** End Patch\\n\"}"
# A bare repository built one file at a time, its hook first: the write that would
# make the directory a git directory is refused, as the sandbox's broker refuses it.
hook "Write a hook into a plain directory (allowed: no repository yet)" 0 Write \
	"{\"file_path\":\"$ws/store/hooks/post-receive\",\"content\":\"x\"}"
mkdir -p "$ws/store/hooks" "$ws/store/objects" && echo x >"$ws/store/hooks/post-receive" &&
	echo 'ref: refs/heads/main' >"$ws/store/HEAD"
hook "Write refs/ that completes a repository holding a hook" 2 Write \
	"{\"file_path\":\"$ws/store/refs/heads/main\",\"content\":\"0\"}"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'mkdir store/refs && echo MADE; echo done' 2>&1)
if sbx_ok "sandboxed completion of a repository"; then
	expect "sandbox: refs/ that completes it is refused" "" "$(grep -x MADE <<<"$out")"
fi

# What a repository's config names (husky's core.hooksPath, include.path), kept
# read-only by the sandbox's scan: the hook refuses it too (pathreview). The key on the
# section's line is git's grammar too (the scan's old reader skipped it).
git init -q "$ws/hprepo" && mkdir -p "$ws/hprepo/.husky/_" && echo x >"$ws/hprepo/shared.cfg" &&
	printf '[Core] hooksPath = ".husky/_" ; husky\n[include]\n\tpath = ../shared.cfg\n' >>"$ws/hprepo/.git/config"
expect "git reads the hooksPath" ".husky/_" "$(git -C "$ws/hprepo" config core.hooksPath)"
hook "Write into core.hooksPath" 2 Write "{\"file_path\":\"$ws/hprepo/.husky/_/pre-commit\",\"content\":\"x\"}"
hook "Write an include.path file" 2 Edit \
	"{\"file_path\":\"$ws/hprepo/shared.cfg\",\"old_string\":\"x\",\"new_string\":\"y\"}"
# husky 9's hooksPath .husky/_ runs the scripts in .husky/: the whole folder is husky's.
hook "Write a husky script beside its hooksPath .husky/_" 2 Write "{\"file_path\":\"$ws/hprepo/.husky/pre-push\",\"content\":\"x\"}"
hook "Write beside .husky (control)" 0 Write "{\"file_path\":\"$ws/hprepo/.huskyrc-notes\",\"content\":\"x\"}"
out=$(cd "$ws/hprepo" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >.husky/_/pre-commit && echo WROTE; echo y >shared.cfg && echo WROTE2; echo done' 2>&1)
if sbx_ok "sandboxed writes into core.hooksPath"; then
	expect "sandbox: core.hooksPath stays read-only" "" "$(grep -x WROTE <<<"$out")"
	expect "sandbox: the include.path file stays read-only" "" "$(grep -x WROTE2 <<<"$out")"
fi
# Hook managers (policy/hookmgr.c): a shim installed as a hook runs what the manager's
# files in the work tree say, at the next commit on the host. pre-commit (its config,
# and a --config= one), lefthook (a missing lefthook-local.yml may not be created),
# overcommit; a repository without a shim keeps those files writable (control).
git init -q "$ws/pcrepo" && git init -q "$ws/lhrepo" && git init -q "$ws/plain" &&
	printf '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nARGS=(hook-impl --config=ci/pc.yaml --hook-type=pre-commit)\n' >"$ws/pcrepo/.git/hooks/pre-commit" &&
	printf '#!/bin/sh\n# lefthook\ncall_lefthook run pre-push "$@"\n' >"$ws/lhrepo/.git/hooks/pre-push" &&
	mkdir -p "$ws/pcrepo/ci" && echo 'repos: []' >"$ws/pcrepo/.pre-commit-config.yaml" &&
	echo 'repos: []' >"$ws/pcrepo/ci/pc.yaml" && echo 'pre-push: {}' >"$ws/lhrepo/lefthook.yml" &&
	echo 'repos: []' >"$ws/plain/.pre-commit-config.yaml" && mkdir -p "$ws/lhrepo/.config"
hook "Edit pre-commit's config where its shim is a hook" 2 Edit \
	"{\"file_path\":\"$ws/pcrepo/.pre-commit-config.yaml\",\"old_string\":\"[]\",\"new_string\":\"[x]\"}"
hook "Write the --config= file pre-commit's shim names" 2 Write "{\"file_path\":\"$ws/pcrepo/ci/pc.yaml\",\"content\":\"x\"}"
hook "Write lefthook.yml where lefthook's shim is a hook" 2 Write "{\"file_path\":\"$ws/lhrepo/lefthook.yml\",\"content\":\"x\"}"
hook "Create lefthook-local.yml where lefthook's shim is a hook" 2 Write "{\"file_path\":\"$ws/lhrepo/lefthook-local.yml\",\"content\":\"x\"}"
# lefthook 2.x also reads lefthook-local.{toml,json,jsonc} and .config/lefthook-local.*
hook "Create lefthook-local.toml where lefthook's shim is a hook" 2 Write "{\"file_path\":\"$ws/lhrepo/lefthook-local.toml\",\"content\":\"x\"}"
hook "Create .config/lefthook-local.yml where lefthook's shim is a hook" 2 Write "{\"file_path\":\"$ws/lhrepo/.config/lefthook-local.yml\",\"content\":\"x\"}"
hook "Write .pre-commit-config.yaml with no shim installed (control)" 0 Write "{\"file_path\":\"$ws/plain/.pre-commit-config.yaml\",\"content\":\"x\"}"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>pcrepo/.pre-commit-config.yaml && echo W1; echo x >pcrepo/ci/pc.yaml && echo W2;
	 echo x >>lhrepo/lefthook.yml && echo W3; echo x >lhrepo/lefthook-local.yml && echo W4;
	 mkdir lhrepo/.lefthook && echo W5; echo x >hprepo/.husky/pre-push && echo W6;
	 mkdir -p lhrepo/.git/info/lefthook-remotes/r && echo W10; echo x >lhrepo/.git/info/lefthook-remotes/r/lefthook.yml && echo W11;
	 echo x >lhrepo/lefthook-local.toml && echo W7; echo x >lhrepo/.lefthook-local.jsonc && echo W8;
	 mv lhrepo/.config lhrepo/.c2; mkdir -p lhrepo/.config; echo x >lhrepo/.config/lefthook-local.yml && echo W9;
	 echo x >>plain/.pre-commit-config.yaml && echo CTL; echo done' 2>&1)
if sbx_ok "sandboxed writes to hook managers' files"; then
	expect "sandbox: hook managers' files stay as they are (none written)" "" \
		"$(grep -xE 'W[0-9]+' <<<"$out" | paste -sd' ')"
	expect "sandbox: without a shim the config is writable (control)" CTL "$(grep -x CTL <<<"$out")"
	expect "host: lefthook-local.yml was not created" no "$([ -e "$ws/lhrepo/lefthook-local.yml" ] && echo yes || echo no)"
	expect "host: lefthook's other local configs were not created" "" \
		"$(cd "$ws/lhrepo" && ls -d lefthook-local.toml .lefthook-local.jsonc .config/lefthook-local.yml .c2/lefthook-local.yml 2>/dev/null)"
	expect "host: pre-commit's config unchanged" 'repos: []' "$(cat "$ws/pcrepo/.pre-commit-config.yaml")"
fi
# pre-commit reads a --config= wherever it is (pre-commit install -c PATH): an absolute
# one, or one above the work tree, that lies in the workspace is guarded as well.
git init -q "$ws/pcabs" && mkdir -p "$ws/pcshared" && echo 'repos: []' >"$ws/pcshared/pc.yaml" &&
	echo 'repos: []' >"$ws/pcabs/abs.yaml" &&
	printf '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nARGS=(hook-impl --config=%s --hook-type=pre-commit)\n' "$ws/pcabs/abs.yaml" >"$ws/pcabs/.git/hooks/pre-commit" &&
	printf '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nARGS=(hook-impl --config=../pcshared/pc.yaml --hook-type=pre-push)\n' >"$ws/pcabs/.git/hooks/pre-push"
hook "Write pre-commit's absolute --config= file" 2 Write "{\"file_path\":\"$ws/pcabs/abs.yaml\",\"content\":\"x\"}"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>pcabs/abs.yaml && echo A1; echo x >>pcshared/pc.yaml && echo A2; echo done' 2>&1)
if sbx_ok "sandboxed writes to pre-commit's --config= files"; then
	expect "sandbox: pre-commit's absolute and climbing --config= files stay as they are" "" \
		"$(grep -xE 'A[0-9]' <<<"$out" | paste -sd' ')"
fi
# A hook that is a symlink into the work tree (ln -s ../../scripts/pre-commit
# .git/hooks/pre-commit) runs its target: read-only, and a pre-commit shim read there.
git init -q "$ws/lkhook" && mkdir -p "$ws/lkhook/scripts" &&
	printf '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n' >"$ws/lkhook/scripts/pre-commit" &&
	echo 'repos: []' >"$ws/lkhook/.pre-commit-config.yaml" && ln -s ../../scripts/pre-commit "$ws/lkhook/.git/hooks/pre-commit"
hook "Write the target of a hook that is a symlink" 2 Write "{\"file_path\":\"$ws/lkhook/scripts/pre-commit\",\"content\":\"x\"}"
hook "Write beside a symlinked hook's target (control)" 0 Write "{\"file_path\":\"$ws/lkhook/scripts/other\",\"content\":\"x\"}"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>lkhook/scripts/pre-commit && echo L1; echo x >>lkhook/.pre-commit-config.yaml && echo L2;
	 mv lkhook/scripts lkhook/s2 && echo L3; echo done' 2>&1)
if sbx_ok "sandboxed writes to a symlinked hook's target"; then
	expect "sandbox: a symlinked hook's target and its shim's config stay as they are" "" \
		"$(grep -xE 'L[0-9]' <<<"$out" | paste -sd' ')"
fi
# A submodule's git directory names its work tree through ".." (core.worktree =
# ../../../sub): a lefthook shim there still launches, and guards that work tree.
git init -q "$ws/smrepo" && mkdir -p "$ws/smrepo/.git/modules" && git init -q --separate-git-dir "$ws/smrepo/.git/modules/sub" "$ws/smrepo/sub" &&
	git -C "$ws/smrepo/sub" config core.worktree ../../../sub &&
	printf '#!/bin/sh\n# lefthook\ncall_lefthook run pre-commit "$@"\n' >"$ws/smrepo/.git/modules/sub/hooks/pre-commit"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >smrepo/sub/lefthook-local.yml && echo S1; echo done' 2>&1)
if sbx_ok "sandbox: a submodule's lefthook shim"; then
	expect "sandbox: a submodule with a lefthook shim launches" done "$(tail -n1 <<<"$out")"
	expect "sandbox: the submodule's lefthook-local.yml cannot be made" "" "$(grep -x S1 <<<"$out")"
fi
# Open (review-fs): managers' shims run programs from the work tree's node_modules, which
# stays writable. husky 9's .husky/_/h does `export PATH="node_modules/.bin:$PATH"; sh -e
# "$s"`, so a planted node_modules/.bin/sh runs at the next commit; lefthook 2.x's shim
# runs <worktree>/node_modules/lefthook-<os>-<arch>/bin/lefthook by absolute path (and
# node_modules/@evilmartians/..., node_modules/lefthook/bin/index.js as fallbacks).
# Guarding them read-only would make `rm -rf node_modules` / `npm ci` fail (EBUSY on a
# mount point); refusing only the creation needs a broker pin that starts at the work
# tree, not at the nearest existing directory. Reported as skip until that lands.
mkdir -p "$ws/hprepo/node_modules/.bin"
printf 'PATH="node_modules/.bin:$PATH"\nsh -e "$s"\n' >"$ws/hprepo/.husky/_/h" 2>/dev/null || true
out=$(cd "$ws/hprepo" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo "#!/bin/sh" >node_modules/.bin/sh && echo PLANTED; echo done' 2>&1)
if grep -qx PLANTED <<<"$out"; then
	skip "sandbox: husky's node_modules/.bin/sh cannot be planted" "open: node_modules stays writable (see the comment above)"
else
	ok "sandbox: husky's node_modules/.bin/sh cannot be planted"
fi
rm -rf "$ws/hprepo/node_modules"
# Codex applies a shell call's apply_patch heredoc itself, outside the (wrapped) shell.
hook "Bash: cd DIR && apply_patch heredoc into ~/.ssh" 2 Bash \
	"{\"command\":\"cd $HOME/.ssh && apply_patch <<'EOF'\\n*** Begin Patch\\n*** Add File: authorized_keys\\n+k\\n*** End Patch\\nEOF\\n\"}"
hook "Bash: apply_patch heredoc in the workspace (control)" 0 Bash \
	"{\"command\":\"apply_patch <<'EOF'\\n*** Begin Patch\\n*** Add File: src/z.c\\n+k\\n*** End Patch\\nEOF\\n\"}"
# An event from a cwd the launcher refuses as a workspace gets no workspace here.
hook "Write /etc from cwd /" 2 Write '{"file_path":"/etc/cron.d/halo-it","content":"x"}' /
hook "Write /etc from cwd /etc" 2 Write '{"file_path":"cron.d/halo-it","content":"x"}' /etc
hook "Write /usr/share from cwd /usr/share (inside an OS tree)" 2 Write '{"file_path":"halo-it","content":"x"}' /usr/share
# The sandbox refuses the same writes.
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >dangle2; echo x >up/../planted; echo done' 2>&1)
if sbx_ok "sandboxed writes through links"; then
	expect "sandbox: a dangling link's target is not made" "no" \
		"$([ -e "$base/out/new.txt" ] && echo yes || echo no)"
	expect "sandbox: .. after a link writes nothing there" "no" \
		"$([ -e "$base/out/planted" ] && echo yes || echo no)"
fi

# What the sandbox cannot see, the harness's Read cannot read either: its own process's
# environment (API keys) through /proc, a service account token under /var/run.
hook "Read /proc/self/environ" 2 Read '{"file_path":"/proc/self/environ"}'
hook "Read /var/run/secrets/.../token" 2 Read '{"file_path":"/var/run/secrets/kubernetes.io/serviceaccount/token"}'
hook "Read /dev/null (control)" 0 Read '{"file_path":"/dev/null"}'
# A search over /tmp would reach halo-run's own state there (the index key).
mkdir -p "/tmp/halo-run-$(id -u)" 2>/dev/null
hook "Grep over /tmp (halo-run's own state below)" 2 Grep '{"pattern":"x","path":"/tmp"}'
# Gemini's read_many_files takes globs: judged like a search's.
hook "read_many_files **/*" 2 read_many_files '{"paths":["**/*"]}'
hook "read_many_files src/*.c (control)" 0 read_many_files '{"paths":["src/*.c"]}'

# A hooksPath from the user's global config: git runs hooks from there in every
# repository (a relative one in each repository's work tree). Written last: the git
# commands above must not see it.
mkdir -p "$ws/ghooks"
printf '[core]\n\thooksPath = %s\n' "$ws/ghooks" >"$HOME/.gitconfig"
hook "Write into the global core.hooksPath" 2 Write "{\"file_path\":\"$ws/ghooks/pre-commit\",\"content\":\"x\"}"
# The sandbox holds the same: the global hooksPath is read-only, a relative one cannot
# be made in a repository (the host's next commit there would run it).
sbx_global() { # ROW CMD FILE: CMD in the sandbox must leave FILE missing
	out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c "$2; echo done" 2>&1)
	if sbx_ok "sandbox: $1"; then
		expect "sandbox: $1" no "$([ -e "$3" ] && echo yes || echo no)"
	fi
}
sbx_global "the global core.hooksPath stays read-only" 'echo x >ghooks/pre-commit' "$ws/ghooks/pre-commit"
mkdir -p "$HOME/.config/git" && printf '[core]\n\thooksPath = .githooks\n' >"$HOME/.config/git/config"
rm -f "$HOME/.gitconfig"
hook "Write into a relative global core.hooksPath in a repository" 2 Write \
	"{\"file_path\":\"$ws/hprepo/.githooks/pre-commit\",\"content\":\"x\"}"
hook "Write beside the relative global hooksPath (control)" 0 Write \
	"{\"file_path\":\"$ws/hprepo/githooks/pre-commit\",\"content\":\"x\"}"
sbx_global "a relative global core.hooksPath cannot be made in a repository" \
	'mkdir -p plain/.githooks; echo x >plain/.githooks/pre-commit' "$ws/plain/.githooks/pre-commit"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c 'mkdir -p plain/githooks && echo x >plain/githooks/pre-commit && echo CTL' 2>&1)
expect "sandbox: beside the relative global hooksPath (control)" CTL "$(grep -x CTL <<<"$out")"
rm -rf "$HOME/.config/git"

# A guard name that is a symlink: its target is what VS Code reads, read-only in the
# sandbox, refused by the hook (pathreview).
mkdir -p "$ws/lk/vsc" && ln -s vsc "$ws/lk/.vscode"
hook "Write through a .vscode symlink's target" 2 Write "{\"file_path\":\"$ws/lk/vsc/tasks.json\",\"content\":\"x\"}"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >lk/vsc/tasks.json && echo WROTE; echo done' 2>&1)
if sbx_ok "sandboxed write to a .vscode symlink's target"; then
	expect "sandbox: a .vscode symlink's target stays read-only" "" "$(grep -x WROTE <<<"$out")"
fi

# A protected path that is a symlink: the sandbox masks what it leads to, so the hook
# refuses that by its own name too (pathreview).
mkdir -p "$base/realsec" && echo k >"$base/realsec/key" && ln -s realsec "$base/sec"
printf 'sandbox:\n  mode: workspace-write\n  protectedPaths: [%s]\n' "$base/sec" >"$TMPDIR/sec.yaml"
for f in sec/key realsec/key; do
	ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Read","tool_input":{"file_path":sys.argv[2]}}))' "$ws" "$base/$f")
	printf '%s' "$ev" | "$HALO" hook --policy "$TMPDIR/sec.yaml" 2>/dev/null
	expect "Read $f (a protected symlink and its target)" 2 "$?"
done
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Grep","tool_input":{"pattern":"k","path":sys.argv[2]}}))' "$ws" "$base")
printf '%s' "$ev" | "$HALO" hook --policy "$TMPDIR/sec.yaml" 2>/dev/null
expect "Grep over the folder holding a protected symlink's target" 2 "$?"
out=$(cd "$ws" && timeout -k 2 30 "$HALO" --quiet --policy "$TMPDIR/sec.yaml" -- sh -c \
	"cat '$base/realsec/key' && echo READ; echo done" 2>&1)
if sbx_ok "sandboxed read of a protected symlink's target"; then
	expect "sandbox: a protected symlink's target is masked" "" "$(grep -x READ <<<"$out")"
fi

# The home as the workspace, its ~/.vimrc a symlink into dotfiles/: the sandbox keeps
# what the entry leads to read-only, the hook refuses it too (pathreview).
h2=$base/h2
mkdir -p "$h2/dotfiles" && echo '" v' >"$h2/dotfiles/vimrc" && ln -s dotfiles/vimrc "$h2/.vimrc"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Edit","tool_input":{"file_path":sys.argv[1]+"/dotfiles/vimrc","old_string":"v","new_string":"w"}}))' "$h2")
printf '%s' "$ev" | HOME=$h2 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Edit a home-set symlink's target (the home is the workspace)" 2 "$?"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/dotfiles/notes","content":"x"}}))' "$h2")
printf '%s' "$ev" | HOME=$h2 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write beside it in the home (control)" 0 "$?"
out=$(cd "$h2" && HOME=$h2 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>dotfiles/vimrc && echo WROTE; echo done' 2>&1)
if sbx_ok "sandboxed write to a home-set symlink's target"; then
	expect "sandbox: a home-set symlink's target stays read-only" "" "$(grep -x WROTE <<<"$out")"
fi

# git expands "~/" in core.hooksPath and include.path with $HOME (review 20): a HOME
# that is not the password database's (a fake one here; a harness's) has its "~/"
# hooks directory and included config read-only in the sandbox and refused by the hook.
h3=$base/h3
mkdir -p "$h3/repo" && git -C "$h3/repo" init -q && printf '[user]\n' >"$h3/inc.cfg"
printf '[core]\n\thooksPath = ~/.githooks\n' >"$h3/.gitconfig"
git -C "$h3/repo" config include.path '~/inc.cfg'
expect "git expands ~/ in the hooksPath with \$HOME" "$h3/.githooks" \
	"$(cd "$h3/repo" && HOME=$h3 git rev-parse --git-path hooks)"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/.githooks/pre-commit","content":"x"}}))' "$h3")
printf '%s' "$ev" | HOME=$h3 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write into a ~/ global core.hooksPath (\$HOME's)" 2 "$?"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1]+"/repo","tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/inc.cfg","content":"x"}}))' "$h3")
printf '%s' "$ev" | HOME=$h3 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write a config a ~/ include.path names" 2 "$?"
out=$(cd "$h3" && HOME=$h3 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'mkdir -p .githooks; echo x >.githooks/pre-commit && echo HOOK; echo x >>inc.cfg && echo INC; echo done' 2>&1)
if sbx_ok "sandboxed writes into ~/ git config paths"; then
	expect "sandbox: a ~/ global core.hooksPath cannot be made" "" "$(grep -x HOOK <<<"$out")"
	expect "sandbox: a ~/ include.path stays read-only" "" "$(grep -x INC <<<"$out")"
fi

# The global config's init.templateDir (git init and clone copy its hooks into each new
# repository) and the file $GIT_CONFIG_GLOBAL names (git's global config instead of
# ~/.gitconfig) stay read-only, and the hook refuses them (review 22).
mkdir -p "$h3/.git-templates/hooks" "$h3/dots2" && echo '[user]' >"$h3/dots2/gitconfig"
printf '[core]\n\thooksPath = ~/.githooks\n[init]\n\ttemplateDir = ~/.git-templates\n' >"$h3/.gitconfig"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/.git-templates/hooks/post-checkout","content":"x"}}))' "$h3")
printf '%s' "$ev" | HOME=$h3 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write into the global init.templateDir" 2 "$?"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/dots2/gitconfig","content":"x"}}))' "$h3")
printf '%s' "$ev" | HOME=$h3 GIT_CONFIG_GLOBAL=$h3/dots2/gitconfig "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write the file \$GIT_CONFIG_GLOBAL names" 2 "$?"
out=$(cd "$h3" && HOME=$h3 GIT_CONFIG_GLOBAL=$h3/dots2/gitconfig timeout -k 2 30 "$HALO" --quiet \
	--policy "$pol" -- sh -c 'echo x >.git-templates/hooks/post-checkout && echo TPL;
	echo x >>dots2/gitconfig && echo GCG; echo x >dots2/other && echo CTL; echo done' 2>&1)
if sbx_ok "sandboxed writes into templateDir and GIT_CONFIG_GLOBAL"; then
	expect "sandbox: the global init.templateDir stays read-only" "" "$(grep -x TPL <<<"$out")"
	expect "sandbox: the file \$GIT_CONFIG_GLOBAL names stays read-only" "" "$(grep -x GCG <<<"$out")"
	expect "sandbox: beside it (control)" CTL "$(grep -x CTL <<<"$out")"
fi

# A program the global config runs by itself (core.fsmonitor at every git status),
# kept in a tree the command writes: read-only, and the hook refuses it (review 24).
mkdir -p "$h3/tools" && echo 'exit 1' >"$h3/tools/fsmon.sh"
printf '[core]\n\tfsmonitor = ~/tools/fsmon.sh\n\tsshCommand = %s\n' "$h3/tools/ssh.sh -v" >"$h3/.gitconfig"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/tools/fsmon.sh","content":"x"}}))' "$h3")
printf '%s' "$ev" | HOME=$h3 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write the script the global core.fsmonitor names" 2 "$?"
out=$(cd "$h3" && HOME=$h3 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>tools/fsmon.sh && echo FSM; echo x >tools/ssh.sh && echo SSH; echo x >tools/other && echo CTL; echo done' 2>&1)
if sbx_ok "sandboxed writes to the programs a git config runs"; then
	expect "sandbox: the global core.fsmonitor's script stays read-only" "" "$(grep -x FSM <<<"$out")"
	expect "sandbox: core.sshCommand's program, missing, cannot be made" "" "$(grep -x SSH <<<"$out")"
	expect "sandbox: beside them (control)" CTL "$(grep -x CTL <<<"$out")"
fi

# Every word of a command-valued key that is a path (review 25): a repository's
# relative filter (run from the work tree's top) and a quoted interpreter (nbstripout's
# own install form) stay read-only, and the hook refuses them.
mkdir -p "$h3/repo/bin" "$h3/repo/.venv/bin" && echo x >"$h3/repo/bin/relfilter" &&
	echo x >"$h3/repo/.venv/bin/python"
printf '[filter "rel"]\n\tclean = bin/relfilter\n[filter "nb"]\n\tclean = \\"%s/repo/.venv/bin/python\\" -m nbstripout\n' \
	"$h3" >>"$h3/repo/.git/config"
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1]+"/repo","tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/repo/bin/relfilter","content":"x"}}))' "$h3")
printf '%s' "$ev" | HOME=$h3 "$HALO" hook --policy "$pol" 2>/dev/null
expect "Write a repository's relative filter program" 2 "$?"
out=$(cd "$h3/repo" && HOME=$h3 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>bin/relfilter && echo REL; echo x >>.venv/bin/python && echo PY; echo done' 2>&1)
if sbx_ok "sandboxed writes to a config's relative and quoted programs"; then
	expect "sandbox: a repository's relative filter stays read-only" "" "$(grep -x REL <<<"$out")"
	expect "sandbox: a quoted filter interpreter stays read-only" "" "$(grep -x PY <<<"$out")"
fi

# Links inside a guarded or protected directory (review 20): what they lead to takes
# the directory's rule. ~/.local/bin/tool -> ../share/app/bin/tool (pipx's way) and a
# dangling one into the home; ~/.ssh/id_x -> ~/dots/ssh/id_x with ~/dots the workspace.
h4=$base/h4
mkdir -p "$h4/.local/bin" "$h4/.local/share/app/bin" "$h4/.ssh" "$h4/dots/ssh"
echo real >"$h4/.local/share/app/bin/tool"
ln -s ../share/app/bin/tool "$h4/.local/bin/tool"
ln -s ../../later/t2 "$h4/.local/bin/t2"
echo SECRET >"$h4/dots/ssh/id_x" && ln -s ../dots/ssh/id_x "$h4/.ssh/id_x"
hev() { # TOOL CWD FILE: the hook's exit status for TOOL on FILE, HOME=$h4
	python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[2],"tool_name":sys.argv[1],"tool_input":{"file_path":sys.argv[3],"content":"x"}}))' "$@" |
		HOME=$h4 "$HALO" hook --policy "$pol" >/dev/null 2>&1
	echo $?
}
expect "hook: Write where a PATH directory's link leads" 2 "$(hev Write "$h4" "$h4/.local/share/app/bin/tool")"
expect "hook: Write beside it (control)" 0 "$(hev Write "$h4" "$h4/.local/share/app/bin/other")"
expect "hook: Read where a protected directory's link leads" 2 "$(hev Read "$h4/dots" "$h4/dots/ssh/id_x")"
out=$(cd "$h4" && HOME=$h4 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'echo x >>.local/share/app/bin/tool && echo WROTE; mkdir -p later && echo x >later/t2 && echo MADE;
	 echo x >.local/share/app/bin/other && echo CTL; echo done' 2>&1)
if sbx_ok "sandboxed writes where a PATH directory's links lead"; then
	expect "sandbox: where a PATH directory's link leads stays read-only" "" "$(grep -x WROTE <<<"$out")"
	expect "sandbox: where a dangling one leads cannot be made" "" "$(grep -x MADE <<<"$out")"
	expect "sandbox: beside it (control)" CTL "$(grep -x CTL <<<"$out")"
	expect "host: the program is unchanged" real "$(cat "$h4/.local/share/app/bin/tool")"
fi
out=$(cd "$h4/dots" && HOME=$h4 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'cat ssh/id_x 2>/dev/null; echo done' 2>&1)
if sbx_ok "sandboxed read where a protected directory's link leads"; then
	expect "sandbox: where a protected directory's link leads is masked" "" "$(grep -x SECRET <<<"$out")"
fi

# A home-set file with another name (a hard link) that may be in the workspace: said
# (review 22: ~/.config/fish/config.fish hard-linked from the dotfiles workspace).
mkdir -p "$h4/.config/fish" "$h4/dots/fish" && echo 'echo hi' >"$h4/dots/fish/config.fish"
ln "$h4/dots/fish/config.fish" "$h4/.config/fish/config.fish"
out=$(cd "$h4/dots" && HOME=$h4 timeout -k 2 30 "$HALO" --policy "$pol" -- true 2>&1)
expect_match "a home-set file with another name on the workspace's file system is said" \
	"$h4/.config/fish/config.fish runs code later .* has another name" "$out"
rm -f "$h4/.config/fish/config.fish"

# A PATH entry "~/x/../pbin": bash expands the "~" and the ".." goes where the kernel
# takes it; the directory stays read-only, and the hook refuses it (review 22).
mkdir -p "$h4/x" "$h4/pbin"
out=$(cd "$h4" && HOME=$h4 PATH="~/x/../pbin:/usr/bin:/bin" timeout -k 2 30 "$HALO" --quiet \
	--policy "$pol" -- /bin/sh -c 'echo x >pbin/c3 && echo WROTE; echo done' 2>&1)
if sbx_ok "sandboxed write into a ~/x/../ PATH entry"; then
	expect "sandbox: a PATH entry ~/x/../pbin stays read-only" "" "$(grep -x WROTE <<<"$out")"
fi
ev=$(python3 -c 'import json,sys; print(json.dumps({"cwd":sys.argv[1],"tool_name":"Write","tool_input":{"file_path":sys.argv[1]+"/pbin/c3","content":"x"}}))' "$h4")
printf '%s' "$ev" | HOME=$h4 PATH="~/x/../pbin:/usr/bin:/bin" "$HALO" hook --policy "$pol" >/dev/null 2>&1
expect "hook: Write into a PATH entry ~/x/../pbin" 2 "$?"

# A PATH entry "~user/x" (bash expands it): that user's home's x, read-only (review 24).
# Root only: a private mount namespace gives root a home here (a fake passwd bound).
if [ "$AS" = root ]; then
	h5=$base/h5 && mkdir -p "$h5/ubin"
	sed "s#^root:x:0:0:[^:]*:[^:]*:#root:x:0:0:root:$h5:#" /etc/passwd >"$base/passwd.h5"
	out=$(cd "$h5" && timeout -k 2 30 unshare -m --propagation private sh -c \
		'mount --bind "$1" /etc/passwd && shift && exec "$@"' sh "$base/passwd.h5" \
		env HOME="$h5" PATH="~root/ubin:/usr/bin:/bin" "$HALO" --quiet --policy "$pol" -- \
		/bin/sh -c 'echo x >ubin/ls && echo WROTE; echo done' 2>&1)
	if ! grep -q done <<<"$out"; then
		skip "sandboxed write into a ~user/ PATH entry" "no sandbox here: $(head -c 200 <<<"$out")"
	else
		expect "sandbox: a PATH entry ~root/ubin stays read-only" "" "$(grep -x WROTE <<<"$out")"
	fi
else
	skip "a PATH entry ~user/x" "needs root (a private mount namespace with a fake passwd)"
fi

# A link to a directory inside a protected one: the links in that directory are
# followed too (review 22: ~/.ssh/keys -> ~/dots/keys, its files linking on into a
# vault); past the bound (1024 entries below each directory) a line says so.
mkdir -p "$h4/dots/keys" "$h4/dots/vault" && echo SECRET2 >"$h4/dots/vault/id_y"
ln -s ../vault/id_y "$h4/dots/keys/id_y" && ln -s ../dots/keys "$h4/.ssh/keys"
out=$(cd "$h4/dots" && HOME=$h4 timeout -k 2 30 "$HALO" --quiet --policy "$pol" -- sh -c \
	'cat vault/id_y 2>/dev/null; echo done' 2>&1)
if sbx_ok "sandboxed read through a linked directory's link"; then
	expect "sandbox: what a linked directory's link leads to is masked" "" "$(grep -x SECRET2 <<<"$out")"
	mkdir -p "$h4/.ssh/many" && (cd "$h4/.ssh/many" && seq -f 'f%g' 1 1100 | xargs touch)
	out=$(cd "$h4/dots" && HOME=$h4 timeout -k 2 30 "$HALO" --policy "$pol" -- true 2>&1)
	expect_match "past the links' bound, a line names the directory" \
		"$h4/.ssh: more entries than halo-run looks through for symlinks" "$out"
	rm -rf "$h4/.ssh/many"
fi

# Linux names are case-sensitive: ARWS is not the workspace arws.
hook "Write to a case variant of the workspace" 2 Write "{\"file_path\":\"$base/ARWS/x\",\"content\":\"x\"}"
hook "Write to the workspace (control)" 0 Write "{\"file_path\":\"$ws/x\",\"content\":\"x\"}"

# halo-run's own files and places (review 20, 6a 6b 8): what the sandbox keeps
# read-only or out of sight, the hook refuses too. own EV_CWD TOOL PATH [HOOK ARGS...]
own() {
	local cwd=$1 tool=$2 path=$3
	shift 3
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],"hook_event_name":"PreToolUse","tool_name":sys.argv[2],"tool_input":{"file_path":sys.argv[3],"content":"egress: {default: allow}\n","old_string":"deny","new_string":"allow"}}))' "$cwd" "$tool" "$path" |
		"$HALO" hook "$@" 2>&1 >/dev/null
}
sandboxed() { # CWD CMD [HALO ARGS...]: the command's output, or SKIP where no sandbox runs
	local cwd=$1 cmd=$2 out
	shift 2
	out=$(cd "$cwd" && timeout -k 2 30 "$HALO" --quiet "$@" -- sh -c "$cmd; echo done" 2>&1)
	if [ -n "$(grep -iE 'namespace|not permitted|unavailable' <<<"$out")" ] && ! grep -q done <<<"$out"; then
		echo SKIP
	else
		echo "$out"
	fi
}
h3=$base/h3
mkdir -p "$h3/proj/ci" "$h3/other" "$h3/.config/halo"
printf 'egress:\n  default: deny\n' >"$h3/proj/ci/halo.yaml"
cp "$h3/proj/ci/halo.yaml" "$h3/agent.yaml"
cp "$h3/proj/ci/halo.yaml" "$h3/proj/ci/layer2.yaml"
cp "$h3/proj/ci/halo.yaml" "$h3/.config/halo/policy.yaml"
chmod -R a+rwX "$h3" 2>/dev/null
# 6a: the run's --policy file in the workspace, a layered one, and one in a home
# workspace (as --policy, and found by discovery in ~/.config/halo).
err=$(HOME=$h3 own "$h3/proj" Write "$h3/proj/ci/halo.yaml" --policy "$h3/proj/ci/halo.yaml")
expect "Write the --policy file in the workspace: refused" 2 "$?"
expect_match "... says it is the policy file" 'a policy file halo-run runs under' "$err"
HOME=$h3 own "$h3/proj" Edit "$h3/proj/ci/layer2.yaml" --policy "$pol" --policy "$h3/proj/ci/layer2.yaml" >/dev/null
expect "Edit a layered --policy file: refused" 2 "$?"
HOME=$h3 own "$h3/proj" Read "$h3/proj/ci/halo.yaml" --policy "$h3/proj/ci/halo.yaml" >/dev/null
expect "Read the policy file (control)" 0 "$?"
HOME=$h3 own "$h3/proj" Write "$h3/proj/ci/layer2.yaml" --policy "$h3/proj/ci/halo.yaml" >/dev/null
expect "Write a policy file the run does not use (control)" 0 "$?"
(cd "$h3" && HOME=$h3 own "$h3" Edit "$h3/agent.yaml" --policy agent.yaml >/dev/null)
expect "Edit a relative --policy file in a home workspace: refused" 2 "$?"
# Found by discovery ($HALO_POLICY) in /tmp: scratch to the hook, but the host's file.
printf 'egress:\n  default: deny\n' >"$TMPDIR/found.yaml"
HOME=$h3 HALO_POLICY=$TMPDIR/found.yaml own "$ws" Edit "$TMPDIR/found.yaml" >/dev/null
expect "Edit the \$HALO_POLICY file in /tmp: refused" 2 "$?"
HOME=$h3 HALO_POLICY=$TMPDIR/found.yaml own "$ws" Write "$TMPDIR/found2.yaml" >/dev/null
expect "Write beside it in /tmp (control)" 0 "$?"
out=$(HOME=$h3 sandboxed "$h3/proj" 'echo x >>ci/halo.yaml && echo WROTE' --policy ci/halo.yaml)
if [ "$out" = SKIP ]; then
	skip "sandbox: the policy file stays read-only" "no sandbox here"
else
	expect "sandbox: the policy file stays read-only" "" "$(grep -x WROTE <<<"$out")"
fi
# 6b: another workspace's caches, the harness in the home; this workspace's own pass.
(cd "$h3/other" && HOME=$h3 timeout -k 2 30 "$HALO" --quiet -- true >/dev/null 2>&1)
own_c=$(cd "$h3" && HOME=$h3 "$HALO" cache 2>/dev/null | awk '$1 == "pip" {print $NF; exit}')
own_c=${own_c%/*}
oth_c=$(cd "$h3/other" && HOME=$h3 "$HALO" cache 2>/dev/null | awk '$1 == "pip" {print $NF; exit}')
oth_c=${oth_c%/*}
expect_match "the two workspaces' caches lie side by side" "^$h3/.cache/halo-run/caches/other-" "$oth_c"
err=$(HOME=$h3 own "$h3" Write "$oth_c/python-user/lib/python3.11/site-packages/evil.pth" --policy "$pol")
expect "Write into another workspace's caches from the home: refused" 2 "$?"
expect_match "... says the sandbox hides them" "hides all but this workspace's own" "$err"
HOME=$h3 own "$h3" Read "$oth_c/pip/x" --policy "$pol" >/dev/null
expect "Read another workspace's caches: refused" 2 "$?"
HOME=$h3 own "$h3" Write "$own_c/pip/x" --policy "$pol" >/dev/null
expect "Write into the home workspace's own caches (control)" 0 "$?"
HOME=$h3 own "$h3/other" Write "$oth_c/pip/x" --policy "$pol" >/dev/null
expect "Write into its own caches from that workspace (control)" 0 "$?"
if [ -d "$oth_c" ]; then
	out=$(HOME=$h3 sandboxed "$h3" "mkdir -p $oth_c/pip && echo x >$oth_c/pip/x && echo WROTE" --policy "$pol")
	if [ "$out" = SKIP ]; then
		skip "sandbox: another workspace's caches are out of reach" "no sandbox here"
	else
		expect "sandbox: another workspace's caches are out of reach" "" "$(grep -x WROTE <<<"$out")"
	fi
else
	skip "sandbox: another workspace's caches are out of reach" "no launch made them here"
fi
# 8: halo-run's own state in /tmp (the index key) and the indexes.
key=/tmp/halo-run-$(id -u)/index.key
err=$(HOME=$h3 own "$ws" Read "$key" --policy "$pol")
expect "Read the index key: refused" 2 "$?"
expect_match "... says it is halo-run's own state" "halo-run's own state" "$err"
HOME=$h3 own "$ws" Write "$key" --policy "$pol" >/dev/null
expect "Write the index key: refused" 2 "$?"
HOME=$h3 own "$ws" Write "/tmp/halo-run-$(id -u)/other" --policy "$pol" >/dev/null
expect "Write into the index key's directory: refused" 2 "$?"
err=$(HOME=$h3 XDG_STATE_HOME= own "$h3" Write "$h3/.local/state/halo-run/index/x.idx" --policy "$pol")
expect "Write into the home's index place (home workspace): refused" 2 "$?"
expect_match "... as the indexes, without asking the launch's scan" 'the workspace indexes' "$err"
if [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -O "$XDG_RUNTIME_DIR" ]; then
	HOME=$h3 own "$ws" Write "$XDG_RUNTIME_DIR/halo-run/hook-s.sock" --policy "$pol" >/dev/null
	expect "Write into the session directory: refused" 2 "$?"
fi
HOME=$h3 own "$ws" Write "/tmp/halo-run-x$(id -u)/x" --policy "$pol" >/dev/null
expect "Write beside it in /tmp (control)" 0 "$?"
out=$(HOME=$h3 sandboxed "$ws" "cat $key >/dev/null && echo READ" --policy "$pol")
if [ "$out" = SKIP ]; then
	skip "sandbox: the index key is out of sight" "no sandbox here"
else
	expect "sandbox: the index key is out of sight" "" "$(grep -x READ <<<"$out")"
fi

finish
