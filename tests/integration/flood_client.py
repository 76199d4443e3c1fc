"""Run INSIDE the sandbox by t_proxy_bounds.sh: open N connections to HOST:PORT and
write to all of them for SECONDS, without ever reading; the origin never reads either.

usage: flood_client.py connect|direct|hold N HOST PORT SECONDS

connect: each connection is a CONNECT tunnel through the proxy at 127.0.0.1:3128.
direct:  each connection dials HOST:PORT by name, as a client that ignores the proxy
         variables (halo-run's DNS stub and capture take it).
hold:    CONNECT tunnels as for connect, then neither written nor read for SECONDS
         (the origin writes: the download direction).
Prints "open K written BYTES refused R": K connections carried bytes, R were refused
(answer other than 200, reset or closed). Writes are non-blocking, so a full buffer
just moves on to the next connection; the loop ends after SECONDS whatever happens,
or sooner once a whole second went by with no progress (STALL_S): nothing more taken
(connect, direct) or nothing more waiting unread (hold). Every buffer on the way is
full then, the most the host holds for this flood; a proxy that kept taking bytes
(what the test is there to catch) makes progress and so runs the full SECONDS.
"""
import errno
import fcntl
import select
import socket
import struct
import sys
import termios
import time

STALL_S = 1.0

mode, n, host, port, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
chunk = b"x" * 65536
socks, refused = [], 0
deadline = time.monotonic() + seconds + 20  # setting up is bounded too


def connect_one():
    if mode == "direct":
        return socket.create_connection((host, port), timeout=5)
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            raise ConnectionError("closed")
        head += d
    if not head.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(head.split(b"\r\n")[0].decode(errors="replace"))
    return s


for _ in range(n):
    if time.monotonic() > deadline:
        break
    try:
        s = connect_one()
    except (OSError, ConnectionError):
        refused += 1
        continue
    s.setblocking(False)
    socks.append(s)
print("ready %d" % len(socks), flush=True)


def unread():  # bytes the origin sent that wait, unread, in this side's buffers
    n = 0
    for s in socks:
        try:
            n += struct.unpack("i", fcntl.ioctl(s.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
        except OSError:
            pass
    return n


if mode == "hold":
    end = time.monotonic() + seconds
    last, moved = -1, time.monotonic()
    while time.monotonic() < end and time.monotonic() - moved < STALL_S:
        n = unread()
        if n != last:
            last, moved = n, time.monotonic()
        time.sleep(0.1)
    print("open %d written 0 refused %d" % (len(socks), refused), flush=True)
    sys.exit(0)
written, live = 0, set(socks)
end = time.monotonic() + seconds
moved = time.monotonic()
while live and time.monotonic() < end and time.monotonic() - moved < STALL_S:
    _, w, _ = select.select([], list(live)[:1000], [], 0.2)
    for s in w:
        try:
            n = s.send(chunk)
        except BlockingIOError:
            continue
        except OSError:
            live.discard(s)
            continue
        written += n
        if n:
            moved = time.monotonic()
print("open %d written %d refused %d" % (len(socks), written, refused), flush=True)
