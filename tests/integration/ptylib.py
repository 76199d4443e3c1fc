"""Drive a program on a fresh pseudo-terminal (python3's pty module), for the
integration tests that need a terminal: t_tty, t_shell, t_macos_portable.
Every wait is bounded; a program that does not end is killed."""
import os
import pty
import select
import time

NEVER = b"\0never\0"


class Pty:
    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(argv[0], argv)
        self.buf = b""

    def read_until(self, pat, secs):
        """Collect output until `pat` (or one of a tuple of them: a prompt, "$ " or
        root's "# ") shows up (True) or `secs` pass / EOF (False)."""
        pats = pat if isinstance(pat, tuple) else (pat,)
        end = time.time() + secs
        while time.time() < end:
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if not r:
                continue
            try:
                d = os.read(self.fd, 4096)
            except OSError:
                return False
            if not d:
                return False
            self.buf += d
            if any(p in self.buf for p in pats):
                return True
        return False

    def drain(self, secs):
        self.read_until(NEVER, secs)

    def status(self, secs):
        """The exit code once the program ends, or "hung" (it is then killed)."""
        end = time.time() + secs
        while time.time() < end:
            p, st = os.waitpid(self.pid, os.WNOHANG)
            if p:
                return os.waitstatus_to_exitcode(st)
            self.drain(0.1)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        return "hung"
