#!/bin/bash
# The home as the workspace while the host changes its persistence set (review 28).
# During a run the host replaces entries (zsh's compinit and sed -i rename a temp file
# over theirs), makes missing ones (pipx makes ~/.local/bin, systemctl --user enable
# ~/.config/systemd/user) and writes temp files beside them (sed's sedXXXXXX, git's
# .gitconfig.lock). None of that becomes the command's: no second name for a kept file
# (a hard link to a replaced entry, or to the host's temp file before the rename), no
# file made beneath a pinned entry the host made, no descriptor on the host's temp file
# (opened, reopened through /proc/self/fd, linked, renamed away and back, exchanged).
# Files that were there at the launch, and the command's own, stay writable.
#
# The home is the runner's scratch directory (HOME=$TMPDIR, never the real /root).
set -u
. "$IT/lib.sh"
H=$HOME
cd "$H" || exit 1
E="$TMPDIR/_stderr"
HOSTN=$(cat /etc/hostname 2>/dev/null || echo host)
S=hh$$
DUMP=.zcompdump-$HOSTN-5.9
MADE=".local/bin .config/systemd/user .config/git .cache/gitstatus .cache/p10k-$AS"

cleanup() {
	(cd "$H" && "$HALO" session stop "$S" >/dev/null 2>&1)
	rm -rf "$H/.local" "$H/.config" "$H/.cache" "$H"/.zcompdump* "$H/.zshrc" "$H/.bashrc" \
		"$H"/sed? "$H"/rc-? "$H/.gitconfig"* "$H"/own* "$H/moved" "$H/d" "$H/notes.txt" \
		"$H"/host-new* "$H"/step? "$H/rw.py" "$H"/mine* "$H"/a? "$H"/alias* "$H"/between* \
		"$H/th.py" "$H/ready0" "$H"/reuse* "$H"/.zcompdump* "$H/stolen" "$H"/.vimrc*
}
trap cleanup EXIT

touch "$H/_bt"
if [ "$(stat -c %W "$H/_bt" 2>/dev/null)" = 0 ] || [ -z "$(stat -c %W "$H/_bt" 2>/dev/null)" ]; then
	rm -f "$H/_bt"
	skip "review 28: the host's files during a run" "no birth times on $(df -T "$H" | awk 'NR==2{print $2}')"
	finish
	exit
fi
rm -f "$H/_bt"

echo 'echo v1' >"$H/.zshrc"
echo '# dump' >"$H/$DUMP"
echo note >"$H/notes.txt"
echo 'set ai' >"$H/.vimrc"

cat >"$H/rw.py" <<'PY'
import ctypes, os, sys, time
dump, who = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
def wait(name):
    t0 = time.time()
    while not os.path.exists(name) and time.time() - t0 < 15:
        time.sleep(0.02)
held = []
def t(name, fn):
    try:
        fd = fn()
        if isinstance(fd, int):
            held.append(fd)
        print(name + ":made")
    except OSError:
        print(name + ":refused")
A = os.O_WRONLY | os.O_APPEND
def put(p):
    with open(p, "a") as f:
        f.write("PWNED\n")
def exchange():
    open("mine2", "w").close()
    if libc.renameat2(-100, b"mine2", -100, b"sedE", 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    return os.open("mine2", A)
def rename_back():
    os.rename("sedC", "mine")
    fd = os.open("mine", A)
    os.rename("mine", "sedC")
    return fd
def own():
    with open("own.txt", "w") as f: f.write("a\n")
    put("own.txt")
    os.link("own.txt", "own2"); put("own2")
    os.makedirs("d", exist_ok=True); put("d/x"); os.rename("d/x", "moved"); put("moved")
    os.system("sed -i s/a/A/ own.txt")
    put("own.txt")
    os.chmod("own.txt", 0o666)
    os.truncate("own2", 1)
# (review 29) inode numbers the command frees here, which ext4 gives the host's next
for i in range(50):
    open("reuse%d" % i, "w").close()
for i in range(50):
    os.unlink("reuse%d" % i)
open("ready0", "w").close()
wait("step1")
def rename_over():
    open("mine3", "w").close()
    fd = os.open("mine3", A)
    os.rename("mine3", "sedF")
    return fd
t("link-replaced", lambda: os.link(".zshrc", "a1"))
t("trunc-replaced", lambda: os.open(".zshrc", os.O_WRONLY | os.O_TRUNC))
t("temp-rename-over", rename_over)
t("temp-unlink", lambda: os.unlink("sedG"))
t("temp-reused-inode", lambda: os.open("sedH", A))
t("temp-truncate", lambda: os.truncate("sedI", 2))
t("temp-predictable", lambda: os.open(".bashrc.tmp", A | os.O_CREAT, 0o644))
t("temp-kept-moved-away", lambda: os.rename(".zcompdump-h.vm.999", "stolen"))
t("beside-symlink", lambda: os.symlink("notes.txt", ".vimrc.tmp"))
t("beside-file", lambda: os.open(".VIMRC.new", A | os.O_CREAT, 0o644))
t("beside-not", lambda: os.close(os.open(".vimrcx", A | os.O_CREAT, 0o644)))
t("temp-predictable-case", lambda: os.open(".ZSHRC.new", A | os.O_CREAT, 0o644))
t("temp-chmod", lambda: os.chmod("sedJ", 0o666))
t("temp-fchmod", lambda: os.fchmod(os.open("sedK", os.O_RDONLY), 0o666))
t("chmod-replaced", lambda: os.chmod(".zshrc", 0o666))
t("temp-setxattr", lambda: os.setxattr("sedK", "user.halo", b"1"))
t("home-chmod", lambda: os.chmod(".", 0o777))
t("truncate-beneath", lambda: os.truncate(".config/git/config", 3))
t("chmod-beneath", lambda: os.chmod(".config/git/config", 0o666))
t("link-replaced-dump", lambda: os.link(dump, "a2"))
t("beneath-bin", lambda: put(".local/bin/git"))
t("beneath-unit", lambda: put(".config/systemd/user/evil.service"))
t("beneath-gitconfig", lambda: put(".config/git/config"))
t("beneath-gitstatus", lambda: put(".cache/gitstatus/gitstatusd-linux-x86_64"))
t("beneath-p10k", lambda: put(".cache/p10k-%s/prompt-99" % who))
t("link-made", lambda: os.link(".bashrc", "a3"))
t("write-made", lambda: put(".bashrc"))
t("temp-link", lambda: (os.link("sedA", "alias"), os.open("alias", A))[1])
t("temp-open", lambda: os.open("sedB", A))
t("temp-rename", rename_back)
t("temp-proc", lambda: os.open("/proc/self/fd/%d" % os.open("sedD", os.O_PATH), A))
t("temp-exchange", exchange)
t("lock-open", lambda: os.open(".gitconfig.lock", A))
t("host-new", lambda: put("host-new.txt"))
t("own", own)
t("old", lambda: put("notes.txt"))
open("done1", "w").close()
wait("step2")
for fd in held:
    os.write(fd, b"PWNED\n")
PY

(
	for ((i = 0; i < 300; i++)); do [ -e "$H/ready0" ] && break; sleep 0.05; done
	mv -f "$H/.zshrc" "$H/.zshrc.old" && echo 'echo v2' >"$H/.zshrc.new" && mv -f "$H/.zshrc.new" "$H/.zshrc"
	echo '# dump 2' >"$H/$DUMP.new" && mv -f "$H/$DUMP.new" "$H/$DUMP"
	for d in $MADE; do mkdir -p "$H/$d"; done
	echo 'echo host' >"$H/.bashrc"
	for x in A B C D E F G H I J K; do echo "host $x" >"$H/sed$x" && chmod 644 "$H/sed$x"; done
	printf '[user]\n\tname = host\n' >"$H/.config/git/config"
	echo 'host Z' >"$H/.zcompdump-h.vm.999"
	printf '[user]\n\tname = host\n' >"$H/.gitconfig.lock"
	echo host >"$H/host-new.txt"
	touch "$H/step1"
	for ((i = 0; i < 300; i++)); do [ -e "$H/done1" ] && break; sleep 0.05; done
	for x in A B C D E F G H I J K; do mv -f "$H/sed$x" "$H/rc-$x" 2>/dev/null; done
	mv -f "$H/.zcompdump-h.vm.999" "$H/.zcompdump-h" # compinit's rename of its dump
	# (review 30) a script's predictable temp name: the host's own file, not the command's
	echo 'echo host script' >"$H/.bashrc.tmp" && mv -f "$H/.bashrc.tmp" "$H/.bashrc"
	mv -f "$H/.gitconfig.lock" "$H/.gitconfig"
	touch "$H/step2"
) &
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" -- python3 rw.py "$DUMP" "$AS" 2>"$E" </dev/null)
RC=$?
wait
expect "the run ran (the home is the workspace)" 0 "$RC"
for way in link-replaced trunc-replaced temp-rename-over temp-unlink temp-reused-inode \
	temp-truncate temp-chmod temp-fchmod chmod-replaced truncate-beneath chmod-beneath \
	temp-setxattr home-chmod \
	temp-predictable temp-predictable-case temp-kept-moved-away beside-symlink beside-file \
	link-replaced-dump beneath-bin beneath-unit beneath-gitconfig \
	beneath-gitstatus beneath-p10k link-made write-made temp-link temp-open temp-rename \
	temp-proc temp-exchange lock-open host-new; do
	expect "refused inside: $way" "$way:refused" "$(grep "^$way:" <<<"$OUT")"
done
expect "the command's own files stay writable (made, linked, moved in, sed -i)" "own:made" \
	"$(grep '^own:' <<<"$OUT")"
expect "a file there at the launch stays writable" "old:made" "$(grep '^old:' <<<"$OUT")"
expect "a name that merely starts like an entry is made (.vimrcx)" "beside-not:made" \
	"$(grep '^beside-not:' <<<"$OUT")"
expect "... and was written" "note
PWNED" "$(cat "$H/notes.txt")"
# On the host: nothing of the command's in what the host made or renamed.
expect "nothing planted in the host's files" "" \
	"$(cd "$H" && grep -rl PWNED .zshrc "$DUMP" .bashrc .gitconfig rc-? .local .config .cache host-new.txt 2>/dev/null)"
expect "the host's renamed temp files are the host's" "host A
host B
host C
host D
host E
host F
host G
host H
host I
host J
host K" "$(cat "$H"/rc-?)"
expect "compinit's temp renamed over its dump: the host's" "host Z" "$(cat "$H/.zcompdump-h")"
expect "a script's .bashrc.tmp renamed over .bashrc: the host's" "echo host script" "$(cat "$H/.bashrc")"
expect "... none left writable to others (chmod)" "644 644 644 644" \
	"$(stat -c %a "$H/rc-J" "$H/rc-K" "$H/.zshrc" "$H/.config/git/config" | tr '\n' ' ' | sed 's/ $//')"
expect "... nor cut short (truncate)" "[user]
	name = host" "$(cat "$H/.config/git/config")"
expect "the replaced .zshrc as the host wrote it (not emptied by O_TRUNC)" "echo v2" "$(cat "$H/.zshrc")"
rm -rf "$H/.local" "$H/.config" "$H/.cache" "$H"/rc-? "$H/.gitconfig"* "$H"/step? "$H/done1" \
	"$H"/own* "$H/moved" "$H/d" "$H"/mine* "$H"/alias* "$H"/host-new* "$H/.bashrc" "$H/.zshrc.old" "$H"/a? \
	"$H/ready0"

# An ordinary workspace (a project inside the home) is not judged so: a file the user
# saves there during a run (an editor's new inode) stays the command's to rewrite.
mkdir -p "$H/proj"
OUT=$(cd "$H/proj" && timeout -k 2 60 "$HALO" -- sh -c 'while [ ! -e saved.txt ] && [ $((n+=1)) -lt 200 ]; do sleep 0.05; done; sed -i s/user/cmd/ saved.txt && echo x >> saved.txt && rm saved.txt && echo ok' 2>&1 </dev/null &
	sleep 1
	echo user >"$H/proj/saved.txt"
	wait)
expect "an ordinary workspace: a file saved there during the run is the command's" ok "$OUT"
rm -rf "$H/proj"

# (review 31) A workspace the home set leads into (a dotfiles repository ~/.bashrc is a
# link into) is judged as the home is: the host's sed -i temp file beside the real
# .bashrc is not the command's.
mkdir -p "$H/dots" && echo 'echo dots' >"$H/dots/bashrc" && ln -sfn dots/bashrc "$H/.bashrc"
OUT=$(cd "$H/dots" && timeout -k 2 60 "$HALO" -- sh -c 'while [ ! -e sedQ ] && [ $((n+=1)) -lt 200 ]; do sleep 0.05; done; { echo PWNED >>sedQ; } 2>/dev/null && echo wrote || echo refused' 2>&1 </dev/null &
	sleep 1
	echo 'echo host' >"$H/dots/sedQ"
	wait)
expect "a dotfiles workspace: the host's temp file beside the real .bashrc: refused" refused "$OUT"
rm -rf "$H/dots" "$H/.bashrc"

# (review 32) An entry that is a link (~/.exrc -> dots2/exrc): nothing made beside its
# own name either; a file beside an entry that was there at the launch stays editable.
mkdir -p "$H/dots2" && echo 'set ai' >"$H/dots2/exrc" && ln -sfn dots2/exrc "$H/.exrc"
echo local >"$H/.vimrc.local"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" -- sh -c '
t() { if eval "$2" 2>/dev/null; then echo "$1:made"; else echo "$1:refused"; fi; }
t link-beside "ln -s notes.txt .exrc.tmp"
t link-beside-case "echo x > .EXRC.new"
t local-append "echo x >> .vimrc.local"
t local-rewrite "echo y > .vimrc.local"' 2>&1 </dev/null)
expect "an entry that is a link: nothing made beside its name" "link-beside:refused
link-beside-case:refused" "$(grep '^link-beside' <<<"$OUT")"
expect "a file beside an entry, there at the launch: edited" "local-append:made
local-rewrite:made" "$(grep '^local-' <<<"$OUT")"
rm -rf "$H/dots2" "$H/.exrc" "$H"/.exrc.* "$H"/.EXRC.* "$H/.vimrc.local"
# (review 32) A file in a directory entry that is a link into the workspace
# (~/.config/nvim/init.lua -> dots3/nvim/init.lua): its directory is judged too.
mkdir -p "$H/dots3/nvim" "$H/.config/nvim" && echo 'x' >"$H/dots3/nvim/init.lua" &&
	ln -sfn "$H/dots3/nvim/init.lua" "$H/.config/nvim/init.lua"
OUT=$(cd "$H/dots3" && timeout -k 2 60 "$HALO" -- sh -c 'while [ ! -e nvim/sedN ] && [ $((n+=1)) -lt 200 ]; do sleep 0.05; done
{ echo PWNED >>nvim/sedN; } 2>/dev/null && echo temp:made || echo temp:refused
{ ln -s ../x nvim/init.lua.tmp; } 2>/dev/null && echo beside:made || echo beside:refused' 2>&1 </dev/null &
	sleep 1
	echo host >"$H/dots3/nvim/sedN"
	wait)
expect "a directory entry's file linked into the workspace: its directory judged" "temp:refused
beside:refused" "$OUT"
rm -rf "$H/dots3" "$H/.config"

# A session: a file the host makes in the home between two calls is the next call's
# to write (it was there when that call started); one made during a call is not, nor
# for a background process of an earlier call.
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- echo started 2>&1 </dev/null)
expect "session started" started "$OUT"
echo host >"$H/between.txt"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- sh -c '{ echo call >>between.txt; } 2>/dev/null && echo wrote || echo refused' 2>&1 </dev/null)
expect "session: a file the host made before the call: written" wrote "$OUT"
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- sh -c 'while [ ! -e between2.txt ] && [ $((n+=1)) -lt 200 ]; do sleep 0.05; done; { echo call >>between2.txt; } 2>/dev/null && echo wrote || echo refused' 2>&1 </dev/null &
	sleep 1
	echo host >"$H/between2.txt"
	wait)
expect "session: a file the host made during the call: refused" refused "$OUT"
expect "... and the host's as it was" host "$(cat "$H/between2.txt")"
# (review 29) A thread started after the host made its file is judged by its process's
# call, not by its own start.
cat >"$H/th.py" <<'PY'
import os, threading, time
t0 = time.time()
while not os.path.exists("between3.txt") and time.time() - t0 < 10:
    time.sleep(0.05)
def w():
    try:
        os.write(os.open("between3.txt", os.O_WRONLY | os.O_APPEND), b"PWNED\n")
        print("wrote")
    except OSError:
        print("refused")
th = threading.Thread(target=w)
th.start()
th.join()
PY
OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- python3 th.py 2>&1 </dev/null &
	sleep 1
	echo host >"$H/between3.txt"
	wait)
expect "session: a thread started after the host's file: refused" refused "$OUT"
# ... nor can a process make itself the spawner's child (a call of its own start).
[ "$(uname -m)" = x86_64 ] && OUT=$(cd "$H" && timeout -k 2 60 "$HALO" --session "$S" -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0)  # clone(CLONE_PARENT | SIGCHLD)
if r == 0:
    os._exit(0)
print("clone-parent", r, ctypes.get_errno())' 2>&1 </dev/null)
if [ "$(uname -m)" = x86_64 ]; then
	expect "CLONE_PARENT refused (EPERM)" "clone-parent -1 1" "$OUT"
else
	skip "CLONE_PARENT refused (EPERM)" "the row's clone number is x86_64's"
fi
(cd "$H" && "$HALO" session stop "$S" >/dev/null 2>&1)
finish
