"""A loopback origin that accepts and never reads (t_proxy_bounds.sh), run on the host
side, never in the sandbox.

usage: sink_origin.py BIND PORTFILE SECONDS [source]

Every accepted connection is kept open and never read from, so whatever a client
writes piles up in the kernel's buffers between the client and here: the test reads
/proc/net/sockstat while that happens. Its own receive buffer is the smallest the
kernel gives (set on the listener, inherited by each accepted socket), so nearly all
the TCP memory the test sees is held by halo-run's sockets and the sandbox's, not by
this origin. It exits after SECONDS. The port is chosen by the kernel and written to
PORTFILE once listening.

source: every accepted connection is also written to, as fast as it takes bytes, for a
client that never reads (the download direction), from a send buffer the smallest the
kernel gives.
"""
import select
import socket
import sys
import time

bind, portfile, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
source = sys.argv[4:] == ["source"]
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
ls.bind((bind, 0))
ls.listen(1024)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
import os

os.rename(portfile + ".tmp", portfile)
held = []
chunk = b"y" * 65536
end = time.monotonic() + seconds
ls.setblocking(False)
while time.monotonic() < end:
    r, w, _ = select.select([ls], held if source else [], [], 0.2)
    if r:
        try:
            c, _ = ls.accept()
            c.setblocking(False)
            held.append(c)
        except BlockingIOError:
            pass
    for c in w:
        try:
            c.send(chunk)
        except OSError:
            pass
