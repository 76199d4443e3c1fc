#!/bin/bash
# Names of the home persistence set kept by their start (policy_home_prefixes): zsh's
# frameworks source files whose names vary with the host, zsh's version or the user
# (oh-my-zsh's compinit dump ~/.zcompdump-HOST-VERSION and its .zwc twin, in the home
# and in $ZDOTDIR; powerlevel10k's ~/.cache/p10k-instant-prompt-USER.zsh and
# ~/.cache/p10k-dump-USER.zsh). With the home as the workspace, each such name that
# exists stays read-only and no new one can be made, by any call (open, mv, ln, ln -s,
# mkdir, mknod), in any case; the hook refuses the harness's own writes there; the rest
# of the home stays writable. A prefix is a prefix: .zcompdumpling is kept too.
#
# The home is the runner's scratch directory (HOME=$TMPDIR, never the real /root).
set -u
. "$IT/lib.sh"
H=$HOME
cd "$H" || exit 1
E="$TMPDIR/_stderr"
HOSTN=$(cat /etc/hostname 2>/dev/null || echo host)
S=pfx$$

# What the home holds before: this host's dump (as oh-my-zsh names it), p10k's instant
# prompt, a plain file, a $ZDOTDIR.
echo '# dump' >"$H/.zcompdump-$HOSTN-5.9"
mkdir -p "$H/.cache" "$H/dots/zsh"
echo '# p10k' >"$H/.cache/p10k-instant-prompt-$AS.zsh"
mkdir -p "$H/.cache/p10k-$AS" # (its prompt cache: fields the instant prompt expands)
echo '# prompt' >"$H/.cache/p10k-$AS/prompt-14"
echo note >"$H/notes.txt"
cleanup() {
	(cd "$H" && "$HALO" session stop "$S" >/dev/null 2>&1)
	rm -rf "$H/dots" "$H/.cache" "$H/notes.txt" "$H/tmpf" "$H/zcompdump-notes" \
		"$H"/.zcompdump* "$H"/.ZCOMPDUMP*
}
trap cleanup EXIT

run_home() {
	OUT=$(cd "$H" && ZDOTDIR=$H/dots/zsh timeout -k 2 60 "$HALO" -- sh -c "$1" 2>"$E" </dev/null)
	RC=$?
}

# Each way in, one a line: "NAME:made" or "NAME:refused".
PLANT=$(
	cat <<EOF
t() { if eval "\$2" 2>/dev/null; then echo "\$1:made"; else echo "\$1:refused"; fi; }
t append 'echo "touch /tmp/x" >> .zcompdump-$HOSTN-5.9'
t remove 'rm -f .zcompdump-$HOSTN-5.9'
t create 'echo x > .zcompdump-$HOSTN-5.10'
t zwc 'echo x > .zcompdump-$HOSTN-5.9.zwc'
t case 'echo x > .ZCOMPDUMP-X'
t mv 'echo x > tmpf && mv tmpf .zcompdump-mv'
t ln-s 'ln -s notes.txt .zcompdump-lnk'
t ln 'ln notes.txt .zcompdump-hard'
t mkdir 'mkdir .zcompdump-dir'
t mknod 'mknod .zcompdump-fifo p'
t prefix-is-a-prefix 'echo x > .zcompdumpling'
t zdotdir 'echo x > dots/zsh/.zcompdump-$HOSTN-5.9'
t p10k-new 'echo x > .cache/p10k-instant-prompt-other.zsh'
t p10k-old 'echo x >> .cache/p10k-instant-prompt-$AS.zsh'
t p10k-dump 'echo x > .cache/p10k-dump-$AS.zsh'
t p10k-mv 'mkdir -p dots/c && echo x > dots/c/p10k-dump-u.zsh && mv dots/c/p10k-dump-u.zsh .cache/'
t cache-away 'mv .cache .cache-old'
t p10k-prompt 'echo "\$(touch /tmp/x)" >> .cache/p10k-$AS/prompt-14'
t p10k-prompt-new 'mkdir .cache/p10k-other && echo x > .cache/p10k-other/prompt-14'
t gitstatusd 'mkdir -p .cache/gitstatus && echo x > .cache/gitstatus/gitstatusd-linux-x86_64'
t unrelated 'echo x >> notes.txt && echo y > zcompdump-notes && echo z > .cache/other'
EOF
)
run_home "$PLANT"
expect "the planting run ran (the home is the workspace)" 0 "$RC"
for way in append remove create zwc case mv ln-s ln mkdir mknod prefix-is-a-prefix zdotdir \
	p10k-new p10k-old p10k-dump p10k-mv cache-away p10k-prompt p10k-prompt-new gitstatusd; do
	expect "refused inside: $way" "$way:refused" "$(grep "^$way:" <<<"$OUT")"
done
expect "the rest of the home stays writable" "unrelated:made" "$(grep '^unrelated:' <<<"$OUT")"

# On the host: nothing made or changed.
expect "the host's dump unchanged" "# dump" "$(cat "$H/.zcompdump-$HOSTN-5.9")"
expect "no other .zcompdump* name in the home" ".zcompdump-$HOSTN-5.9" \
	"$(cd "$H" && ls -A | grep -i '^\.zcompdump' | tr '\n' ' ' | sed 's/ $//')"
expect "no .zcompdump* in \$ZDOTDIR" "" "$(ls -A "$H/dots/zsh" | grep -i zcompdump)"
expect "p10k's instant prompt unchanged" "# p10k" "$(cat "$H/.cache/p10k-instant-prompt-$AS.zsh")"
expect "p10k's prompt cache unchanged (review 27)" "# prompt" "$(cat "$H/.cache/p10k-$AS/prompt-14")"
expect "no gitstatus in ~/.cache (review 27)" "" "$(ls -A "$H/.cache" | grep -i gitstatus)"
expect "no other p10k-* name in ~/.cache" "p10k-instant-prompt-$AS.zsh p10k-$AS" \
	"$(ls -A "$H/.cache" | grep -i '^p10k' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
rm -f "$H/tmpf" "$H/zcompdump-notes" "$H/.cache/other"

# --dry-run says the rows, each with its reason.
OUT=$(cd "$H" && "$HALO" --dry-run -- true 2>/dev/null)
expect_match "dry-run: ~/.zcompdump* refused by its start" \
	"^  $H/\.zcompdump\* \(home set: .*oh-my-zsh" "$OUT"
expect_match "dry-run: ~/.cache/p10k-* refused by its start" \
	"^  $H/\.cache/p10k-\* \(home set: powerlevel10k" "$OUT"
expect_match "dry-run: the existing dump guarded" "^  $H/\.zcompdump-$HOSTN-5\.9 \(home set:" "$OUT"

# The hook judges the same names (policy_home_prefix_name, the one predicate).
hook_ev() {
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s","cwd":sys.argv[1],
	"hook_event_name":"PreToolUse","tool_name":"Write",
	"tool_input":{"file_path":sys.argv[2],"content":"x"}}))' "$H" "$1" |
		(cd "$H" && ZDOTDIR=$H/dots/zsh "$HALO" hook 2>&1 >/dev/null)
}
for f in ".zcompdump-$HOSTN-5.9" .zcompdump-other-5.9 .ZCOMPDUMP-X .zcompdumpling \
	dots/zsh/.zcompdump-x .cache/p10k-instant-prompt-u.zsh .cache/p10k-dump-u.zsh.zwc; do
	expect_match "hook: Write ~/$f is blocked" "persistence set" "$(hook_ev "$H/$f")"
done
expect "hook: Write ~/zcompdump-notes is allowed" "" "$(hook_ev "$H/zcompdump-notes")"
expect "hook: Write ~/.cache/other is allowed" "" "$(hook_ev "$H/.cache/other")"
# An existing name that is a link: what it leads to is the entry's, in both.
echo data >"$H/dots/dump" && ln -s dots/dump "$H/.zcompdump-lnk"
expect_match "hook: Write where ~/.zcompdump-lnk leads is blocked" "\.zcompdump-lnk" \
	"$(hook_ev "$H/dots/dump")"
run_home '{ echo x >>dots/dump; } 2>/dev/null && echo wrote || echo refused'
expect "sandbox: where ~/.zcompdump-lnk leads is read-only" refused "$OUT"
rm -f "$H/.zcompdump-lnk" "$H/dots/dump"

# A session and its calls: one home-set digest (a call joins); a name made on the host
# since the session started is one the session does not hold: the call is refused.
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- sh -c 'echo started; echo s > /tmp/pfx-in' 2>&1 </dev/null)
expect "session started" started "$OUT"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- cat /tmp/pfx-in 2>&1 </dev/null)
expect "a call joins the session (same digest)" s "$OUT"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- sh -c '{ echo x >.zcompdump-s; } 2>/dev/null && echo made || echo refused' 2>&1 </dev/null)
expect "in the session: a new .zcompdump* refused" refused "$OUT"
echo host >"$H/.zcompdump-late"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- sh -c 'echo x >> .zcompdump-late && echo wrote' 2>&1 </dev/null)
expect_match "a dump made on the host later: the session's call is refused" "appeared" "$OUT"
expect "... and it is unchanged" host "$(cat "$H/.zcompdump-late")"

# (review 27) A guarded file the host replaces during the run (rename over it, as
# compinit and powerlevel10k rewrite theirs) loses its read-only mount inside: writing
# it by name, or through an O_PATH descriptor reopened by /proc/self/fd, is refused
# still (EROFS), and the host's new file is left as it is.
echo v1 >"$H/.zshrc"
echo d1 >"$H/.zcompdump-$HOSTN-5.9"
cat >"$H/rw.py" <<'PY'
import os, sys, time
t0 = time.time()
while not os.path.exists("replaced") and time.time() - t0 < 10:
    time.sleep(0.05)
for p in sys.argv[1:]:
    for how in ("name", "proc", "rename", "recreate"):
        try:
            if how == "name":
                fd = os.open(p, os.O_WRONLY | os.O_APPEND)
            elif how == "proc":
                fd = os.open("/proc/self/fd/%d" % os.open(p, os.O_PATH), os.O_WRONLY | os.O_APPEND)
            elif how == "rename":
                with open("planted.tmp", "w") as f:
                    f.write("planted\n")
                os.rename("planted.tmp", p)
                fd = -1
            else:
                os.unlink(p)
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            if fd >= 0:
                os.write(fd, b"planted\n")
            print(p, how, "wrote")
        except OSError:
            print(p, how, "refused")
PY
(sleep 1; for f in .zshrc ".zcompdump-$HOSTN-5.9"; do echo v2 >"$H/$f.tmp" && mv -f "$H/$f.tmp" "$H/$f"; done; touch "$H/replaced") &
run_home "python3 rw.py .zshrc .zcompdump-$HOSTN-5.9"
wait
expect "a guarded file the host replaced: still refused inside, by name and by /proc/self/fd" \
	".zshrc name refused
.zshrc proc refused
.zshrc rename refused
.zshrc recreate refused
.zcompdump-$HOSTN-5.9 name refused
.zcompdump-$HOSTN-5.9 proc refused
.zcompdump-$HOSTN-5.9 rename refused
.zcompdump-$HOSTN-5.9 recreate refused" "$OUT"
# (removing it is not refused: an unlink is not the broker's; what is left is the
# host's or nothing, never the command's)
expect "... nothing of the command's in the host's files" "" \
	"$(cat "$H/.zshrc" "$H/.zcompdump-$HOSTN-5.9" 2>/dev/null | grep planted)"
echo '# dump' >"$H/.zcompdump-$HOSTN-5.9"
rm -f "$H/rw.py" "$H/replaced" "$H/.zshrc" "$H/planted.tmp"

# (review 27) oh-my-zsh's compinit names its dump after the host (halo inside), which
# the home may not hold: it goes to the sandbox's /tmp (ZSH_COMPDUMP), quietly, not
# refused at every interactive start.
if command -v zsh >/dev/null; then
	printf '%s\n' 'ZSH_COMPDUMP="${ZSH_COMPDUMP:-${ZDOTDIR:-$HOME}/.zcompdump-${HOST/.*/}-${ZSH_VERSION}}"' \
		'autoload -U compinit' 'compinit -u -d "$ZSH_COMPDUMP"' >"$H/.zshrc"
	OUT=$(cd "$H" && HOME=$H timeout -k 2 60 "$HALO" -- zsh -i -c 'echo "$ZSH_COMPDUMP"; [ -s "$ZSH_COMPDUMP" ] && echo dumped' 2>"$E" </dev/null)
	expect "oh-my-zsh's compinit in a home workspace: its dump in /tmp" "/tmp/.zcompdump
dumped" "$OUT"
	expect "... and nothing on stderr" "" "$(cat "$E")"
	rm -f "$H/.zshrc"
else
	skip "oh-my-zsh's compinit in a home workspace" "no zsh here"
fi
finish
