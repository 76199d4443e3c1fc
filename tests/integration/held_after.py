"""held_after.py HALO FILE: run a command under halo-run that leaves a background
process holding FILE and slow to die (it is in fsync, uninterruptible, over and over:
a SIGKILL waits for the disk), then, the moment halo-run has returned, count the
processes that still hold FILE open. Prints the command's
output, halo-run's exit code and that count. Looked at from the process that ran
halo-run: a shell's next command would come milliseconds too late."""
import os
import subprocess
import sys

halo, held = sys.argv[1], sys.argv[2]
ready = held + ".ready"
cmd = ("python3 -c 'import os; f = open(\"%s\", \"wb\"); x = b\"\\1\" * (32 << 20); "
       "open(\"%s\", \"w\").close()\n"
       "for i in range(3000): f.seek(0); f.write(x); f.flush(); os.fsync(f.fileno())' </dev/null >/dev/null 2>&1 & "
       "i=0; while [ ! -e %s ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i + 1)); done; "
       "sleep 0.3; [ -e %s ] && echo ready" % (held, ready, ready, ready))
r = subprocess.run([halo, "--", "sh", "-c", cmd], stdin=subprocess.DEVNULL,
                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
n = 0
for p in os.listdir("/proc"):
    try:
        for fd in os.listdir("/proc/%s/fd" % p):
            n += os.readlink("/proc/%s/fd/%s" % (p, fd)) == held
    except OSError:
        pass
print(r.stdout.decode().strip(), r.returncode, n)
try:
    os.unlink(ready)
except OSError:
    pass
