"""In-sandbox client for t_capture.sh: every lookup and connection as a client that
knows nothing of proxies would make it (no proxy variable is read).

usage: capture_client.py dns udp|tcp NAME TYPE   -> "RCODE N [A...]"
       capture_client.py raw HEX                  -> "RCODE" of a hand-made UDP query
       capture_client.py sock NAME PORT           -> first body line of GET /hello
       capture_client.py httpc NAME PORT          -> status and body of GET /hello
       capture_client.py sshproxy HOST PORT       -> a dumb ProxyCommand: CONNECT through
                                                     127.0.0.1:3128, then every byte both ways
"""
import http.client
import random
import socket
import struct
import sys
import threading

RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
TYPES = {"A": 1, "AAAA": 28, "TXT": 16, "ANY": 255, "MX": 15}
STUB = ("127.0.0.53", 53)


def query(name, qtype):
    q = struct.pack("!HHHHHH", random.randint(0, 65535), 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack("!HH", qtype, 1)


def ask(proto, msg):
    if proto == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(msg, STUB)
        return s.recv(4096)
    s = socket.create_connection(STUB, timeout=5)
    s.sendall(struct.pack("!H", len(msg)) + msg)
    buf = b""
    while len(buf) < 2 or len(buf) < 2 + struct.unpack("!H", buf[:2])[0]:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    return buf[2:]


def answers(r):
    """The A records of a response whose question is one name (we asked it)."""
    an = struct.unpack("!H", r[6:8])[0]
    at = 12
    while r[at]:
        at += 1 + r[at]
    at += 5
    out = []
    for _ in range(an):
        at += 2  # a pointer to the question's name
        t, _c, _ttl, ln = struct.unpack("!HHIH", r[at:at + 10])
        at += 10
        if t == 1:
            out.append(socket.inet_ntoa(r[at:at + ln]))
        at += ln
    return an, out


def get(name, port):
    s = socket.create_connection((name, port), timeout=10)
    s.sendall(b"GET /hello HTTP/1.0\r\nHost: %s\r\n\r\n" % name.encode())
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    return data.split(b"\r\n\r\n", 1)[1].decode().splitlines()[0]


def sshproxy(host, port):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())

    def up():
        while True:
            b = sys.stdin.buffer.read1(4096)
            if not b:
                break
            s.sendall(b)

    threading.Thread(target=up, daemon=True).start()
    while True:
        b = s.recv(4096)
        if not b:
            break
        sys.stdout.buffer.write(b)
        sys.stdout.buffer.flush()


mode = sys.argv[1]
try:
    if mode == "dns":
        r = ask(sys.argv[2], query(sys.argv[3], TYPES[sys.argv[4]]))
        an, a = answers(r)
        print(" ".join([RCODES.get(r[3] & 15, str(r[3] & 15)), str(an)] + a))
    elif mode == "raw":
        r = ask("udp", bytes.fromhex(sys.argv[2]))
        print(RCODES.get(r[3] & 15, str(r[3] & 15)))
    elif mode == "sock":
        print(get(sys.argv[2], int(sys.argv[3])))
    elif mode == "httpc":
        c = http.client.HTTPConnection(sys.argv[2], int(sys.argv[3]), timeout=10)
        c.request("GET", "/hello")
        resp = c.getresponse()
        print(resp.status, resp.read().decode().strip())
    elif mode == "sshproxy":
        sshproxy(sys.argv[2], sys.argv[3])
except Exception as e:  # the test compares what failed
    print("error: %s: %s" % (type(e).__name__, e))
