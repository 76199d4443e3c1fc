#!/bin/bash
# The terminal: under a pty, an interactive shell in the sandbox reads a typed command,
# runs it, takes ^C for its foreground job and a window resize, and exits with the
# status typed; TIOCSTI (terminal input injection) fails inside, in both spellings
# of the request, while it works outside on the same pty (so the row means something).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
cp "$HELPERS/it_sup" ./it_sup 2>/dev/null || true

# ptydrive.py MODE ARGV...: run ARGV on a fresh pty (python3's pty module) and print one
# "key value" line per check. Every wait is bounded.
cat >ptydrive.py <<'EOF'
import fcntl, os, struct, sys, termios, time

mode, argv = sys.argv[1], sys.argv[2:]
sys.path.insert(0, os.environ["IT"])
from ptylib import Pty

P = Pty(argv)

def say(k, v):
    print(k, "yes" if v is True else "no" if v is False else v, flush=True)

if mode == "shell":
    # A prompt ends in "$ " (or "# " for uid 0): wait for either.
    end = time.time() + 10
    prompt = False
    while time.time() < end and not prompt:
        P.drain(0.2)
        prompt = P.buf.rstrip(b" ").endswith((b"$", b"#"))
    say("prompt", prompt)
    os.write(P.fd, b"echo TTY-$((6*7))\n")
    say("typed", P.read_until(b"TTY-42", 5))
    os.write(P.fd, b"test -t 0 && test -t 1 && echo IS-A-$((1))-TTY\n")
    say("isatty", P.read_until(b"IS-A-1-TTY", 5))
    os.write(P.fd, b"sleep 30; echo SLEPT-$((3))\n")
    time.sleep(0.5)
    t0 = time.time()
    os.write(P.fd, b"\x03")  # ^C: the terminal's SIGINT to the foreground job
    os.write(P.fd, b"echo AFTER-$((1+1))\n")
    say("ctrlc", P.read_until(b"AFTER-2", 5) and time.time() - t0 < 5 and b"SLEPT-3" not in P.buf)
    fcntl.ioctl(P.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    os.write(P.fd, b"stty size | sed 's/ /x/'\n")
    say("winsize", P.read_until(b"40x100", 5))
    os.write(P.fd, b"exit 5\n")
    say("status", P.status(10))
    say("pgrp_msg", b"Cannot set tty process group" in P.buf)
else:  # one command; print its output and status
    st = P.status(10)
    out = P.buf.decode(errors="replace").replace("\r", "").strip()
    say("output", out.replace("\n", "|") or "<none>")
    say("status", st)
EOF

drive() { # MODE ARGV...: sets R (the driver's report)
	R=$(timeout -k 2 40 python3 ptydrive.py "$@" 2>&1 </dev/null)
}
val() { sed -n "s/^$1 //p" <<<"$R"; }

# ---------------------------------------------------------------- interactive sh
drive shell "$HALO" -- sh -i
expect "pty: interactive sh shows a prompt" yes "$(val prompt)"
expect "pty: a typed command runs" yes "$(val typed)"
expect "pty: stdin and stdout are the terminal" yes "$(val isatty)"
expect "pty: ^C stops the foreground job, the shell goes on" yes "$(val ctrlc)"
expect "pty: a window resize is seen (stty size)" yes "$(val winsize)"
# dash restores, on exit, the terminal's foreground process group it found at start:
# halo-run's, which is outside the pid namespace, so it prints "Cannot set tty process
# group" and exits 2 (bwrap --unshare-pid does the same). The shell must still exit.
expect_match "pty: typed 'exit 5' ends the shell and halo-run (5, or dash's 2)" "^(5|2)$" "$(val status)"
drive shell "$HALO" -- bash --norc --noprofile -i
expect "pty: interactive bash: typed command runs" yes "$(val typed)"
expect "pty: interactive bash: ^C stops the foreground job" yes "$(val ctrlc)"
expect "pty: interactive bash: typed 'exit 5' is halo-run's exact status" 5 "$(val status)"

# --quiet: the workspace is also $HOME here, and halo-run says so on stderr.
drive cmd "$HALO" --quiet -- sh -c 'test -t 0 && test -t 1 && test -t 2 && echo tty'
expect "pty: non-interactive command sees a tty on 0, 1, 2" "tty" "$(val output)"

# ---------------------------------------------------------------- TIOCSTI
# Baseline outside, on the same kind of pty: the injection works (legacy_tiocsti=1
# or a root caller), so a refusal inside is the sandbox's doing.
drive cmd ./it_sup tiocsti
base=$(val output)
if [ "$base" = ok ]; then
	ok "pty: TIOCSTI works outside the sandbox (baseline)"
else
	ok "pty: TIOCSTI already refused outside ($base): the rows below still check the sandbox refuses"
fi
drive cmd "$HALO" -- ./it_sup tiocsti
expect_match "pty: TIOCSTI refused inside" "^(EPERM|EACCES|EIO)$" "$(val output | tr '|' '\n' | tail -1)"
drive cmd "$HALO" -- ./it_sup tiocsti hi
expect_match "pty: TIOCSTI with bit 32 set in the request refused inside" "^(EPERM|EACCES|EIO)$" \
	"$(val output | tr '|' '\n' | tail -1)"
expect "pty: TIOCSTI probe exits 0 (it ran)" 0 "$(val status)"

finish
