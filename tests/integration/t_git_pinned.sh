#!/bin/bash
# git config in a repository that existed before the launch (issue 24, item 1): its
# .git/config is pinned (a read-only mount point), so git's lock-file rename onto it
# gave EBUSY ("could not write config file .git/config: Device or resource busy") for
# `git config`, `git remote add`, `git push -u`, `git branch -u`, `checkout --track`.
# Now the change goes through init's vetting: keys that run no program are written,
# keys that do (core.pager, core.hooksPath, alias.x=!cmd) are refused with EACCES and
# one warning line, and keys the host's config already had stay as they were. Real
# git, a local bare origin in the workspace; host-side checks after the sandbox.
# IT_DEBUG=1 prints what the command printed.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
if ! command -v git >/dev/null; then
	skip "git config in a pinned repository" "git is not installed"
	finish
	exit
fi
E="$TMPDIR/_stderr"
MARK="$TMPDIR/planted-ran"
git_host() { git -c user.name=host -c user.email=host@example.test -c init.defaultBranch=main "$@"; }
printf 'sandbox: {mode: workspace-write}\n' >plain.yaml

mkdir -p w && cd w || exit 1
git_host init -q r && (cd r && echo one >f && git_host add f && git_host commit -qm one)
git -C r config alias.hi '!echo hi-from-host' # the host's own key that runs a program
git_host init -q --bare origin.git
git_host init -q sub.git.src && (cd sub.git.src && echo s >s && git_host add s && git_host commit -qm s)
git clone -q --bare sub.git.src sub.git
cd "$TMPDIR" || exit 1

CMDS='cd r
G="git -c user.name=in -c protocol.file.allow=always"
git config user.email in@example.test; echo "config=$?"
git remote add origin ../origin.git; echo "remote-add=$?"
$G push -q -u origin main; echo "push-u=$?"
git branch -q x && git branch -q -u origin/main x; echo "branch-u=$?"
git checkout -q -b y --track origin/main; echo "checkout-track=$?"
git checkout -q main
$G submodule -q add ../sub.git sm; echo "submodule-add=$?"
git config core.pager "touch '"$MARK"'"; echo "pager=$?"
git config core.hooksPath /tmp; echo "hookspath=$?"
git config alias.x "!touch '"$MARK"'"; echo "alias=$?"
git config --unset alias.hi; echo "unset-kept=$?"
git config user.name later; echo "after-refusals=$?"
git remote add tmp ../nowhere.git && git remote remove tmp; echo "remote-remove=$?"'
OUT=$(cd w && timeout -k 2 60 "$HALO" --policy "$TMPDIR/plain.yaml" -- sh -c "$CMDS" 2>"$E" </dev/null)
ERR=$(cat "$E")
[ -n "${IT_DEBUG:-}" ] && printf "%s\n--\n%s\n" "$OUT" "$ERR" >&2
for w in config remote-add push-u branch-u checkout-track submodule-add after-refusals remote-remove; do
	expect "a repository made before the launch: git $w works" "$w=0" \
		"$(printf '%s\n' "$OUT" | grep "^$w=")"
done
for w in pager hookspath alias unset-kept; do
	expect_match "... $w refused" "^$w=[1-9]" "$(printf '%s\n' "$OUT" | grep "^$w=")"
done
expect "... never EBUSY" "" "$(grep -i 'resource busy' <<<"$ERR")"
expect_match "... refusals: Permission denied (EACCES)" "could not (write|lock) config.*Permission denied" "$ERR"
expect "... and one warning line from halo-run" 1 "$(grep -c '^halo-run: warning: refused [0-9]* change' <<<"$ERR")"
expect_match "... naming the first refused key" "core.pager is not allowed" "$ERR"
R="$TMPDIR/w/r"
expect "host: user.email written" in@example.test "$(git -C "$R" config user.email)"
expect "host: remote origin written" ../origin.git "$(git -C "$R" config remote.origin.url)"
expect "host: push -u set main's upstream" "origin refs/heads/main" \
	"$(git -C "$R" config branch.main.remote) $(git -C "$R" config branch.main.merge)"
expect "host: branch -u set x's upstream" origin "$(git -C "$R" config branch.x.remote)"
expect "host: checkout --track set y's upstream" origin "$(git -C "$R" config branch.y.remote)"
expect "host: the pushed commit is in the bare origin" one \
	"$(git -C "$TMPDIR/w/origin.git" log -1 --format=%s main 2>&1)"
expect "host: submodule add recorded sm" "../sub.git s" \
	"$(git -C "$R" config submodule.sm.url) $(ls "$R/sm" 2>&1)"
expect "host: a removed remote is gone, the shorter file left with no padding" "0 0" \
	"$(git -C "$R" config --get-regexp '^remote\.tmp\.' | wc -l) $(grep -c '^$' "$R/.git/config")"
expect "host: the host's own alias is kept" '!echo hi-from-host' "$(git -C "$R" config alias.hi)"
expect "host: no key that runs a program was planted" "" \
	"$(git -C "$R" config --local --list | grep -iE 'pager|hookspath|alias\.x')"
rm -f "$MARK"
(cd "$R" && GIT_PAGER= PAGER= git_host -p log -1 >/dev/null 2>&1; git_host x >/dev/null 2>&1
	git_host commit -q --allow-empty -m host >/dev/null 2>&1)
expect "host: git log, git x, git commit afterwards run nothing planted" absent \
	"$([ -e "$MARK" ] && echo present || echo absent)"
finish
