"""Raw client for t_egress*.sh, run INSIDE the sandbox: it speaks to halo-run's proxy
on the sandbox's own loopback byte by byte, so the proxy (not a client library that
normalises URLs) decides every row.

  http REQ [REQ...]        send each request on one connection, one answer each; a
                           CONNECT answered 200 carries "GET /hello" through the tunnel.
                           Prints: the codes (EOF if closed unanswered), the
                           X-Halo-Deny value of the last answer, else "error: " and
                           its X-Halo-Error value, else -; then its body.
  socks ATYP HOST PORT [CMD]  ATYP domain|v4|v6|5; prints the reply code (2 hex
                           digits, or EOF); after 00 the body of "GET /hello".
  tcp HOST PORT            a direct TCP connect: "ok" or the errno name.
  selfconnect              listen on 127.0.0.1:0, connect to it: "ok" or errno name.
  many N HOST PORT         N CONNECT tunnels open at once, each carrying a GET; prints
                           how many returned "hello".
  slow                     send one byte of a head and wait: "CODE SECONDS".
REQ and HOST use Python escapes (\\r\\n, \\x00, \\xc3...).
"""
import codecs
import errno
import socket
import struct
import sys
import time

PROXY = ("127.0.0.1", 3128)
SOCKS = ("127.0.0.1", 1080)
TUNNEL_GET = b"GET /hello HTTP/1.0\r\nHost: tunnel\r\n\r\n"


def unescape(s):
    return codecs.escape_decode(s.encode())[0]


def err_name(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__


class Reader:
    def __init__(self, s):
        self.s, self.buf, self.eof = s, b"", False

    def fill(self):
        data = self.s.recv(65536)
        if not data:
            self.eof = True
        self.buf += data
        return bool(data)

    def head(self):
        while b"\r\n\r\n" not in self.buf:
            if not self.fill():
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        return head

    def take(self, n):
        while len(self.buf) < n and self.fill():
            pass
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def rest(self):
        while self.fill():
            pass
        out, self.buf = self.buf, b""
        return out


def parse_head(head):
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        fields[k.strip().lower()] = v.strip()
    return lines[0].split(" ")[1], fields


def response(rd, connect):
    """(code, fields, body) of one answer; a 200 CONNECT is followed through."""
    head = rd.head()
    if head is None:
        return "EOF", {}, rd.buf
    code, fields = parse_head(head)
    if connect and code == "200":
        rd.s.sendall(TUNNEL_GET)
        inner = rd.rest()
        return code, fields, inner.split(b"\r\n\r\n", 1)[-1]
    if "content-length" in fields:
        return code, fields, rd.take(int(fields["content-length"]))
    return code, fields, rd.rest()


def cmd_http(reqs):
    s = socket.create_connection(PROXY, timeout=15)
    rd = Reader(s)
    codes, fields, body = [], {}, b""
    for r in reqs:
        req = unescape(r)
        try:
            s.sendall(req)
            code, fields, body = response(rd, req.startswith(b"CONNECT "))
        except OSError as e:
            code, fields, body = err_name(e), {}, b""
        codes.append(code)
        if not code.isdigit():
            break
    print(" ".join(codes))
    if "x-halo-deny" in fields:
        print(fields["x-halo-deny"])
    elif "x-halo-error" in fields:
        print("error: " + fields["x-halo-error"])
    else:
        print("-")
    sys.stdout.write(body.decode("utf-8", "replace"))


def socks_addr(atyp, host):
    if atyp == "v4":
        return b"\x01" + socket.inet_pton(socket.AF_INET, host)
    if atyp == "v6":
        return b"\x04" + socket.inet_pton(socket.AF_INET6, host)
    if atyp == "5":
        return b"\x05" + b"\x00" * 4
    name = unescape(host)
    return b"\x03" + bytes([len(name)]) + name


def cmd_socks(atyp, host, port, cmd="1"):
    s = socket.create_connection(SOCKS, timeout=15)
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        print("NOAUTH")
        return
    s.sendall(b"\x05" + bytes([int(cmd)]) + b"\x00" + socks_addr(atyp, host)
              + struct.pack(">H", int(port)))
    rd = Reader(s)
    rep = rd.take(10)
    if len(rep) < 2:
        print("EOF")
        return
    print("%02x" % rep[1])
    if rep[1] == 0:
        s.sendall(TUNNEL_GET)
        sys.stdout.write(rd.rest().split(b"\r\n\r\n", 1)[-1].decode())


def cmd_tcp(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        print("ok")
    except OSError as e:
        print(err_name(e))


def cmd_selfconnect():
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    cmd_tcp("127.0.0.1", lst.getsockname()[1])


def cmd_many(n, host, port):
    socks = []
    for _ in range(int(n)):
        s = socket.create_connection(PROXY, timeout=30)
        s.sendall(b"CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n"
                  % (host.encode(), port.encode(), host.encode(), port.encode()))
        socks.append(s)
    # Every tunnel is established before any carries data: all N are open at once.
    readers = [Reader(s) for s in socks]
    ready = [rd for rd in readers if (h := rd.head()) and h.startswith(b"HTTP/1.1 200")]
    for rd in ready:
        rd.s.sendall(TUNNEL_GET)
    print(sum(1 for rd in ready if rd.rest().endswith(b"hello from %s\n" % b"127.0.0.1")))


def cmd_slow():
    s = socket.create_connection(PROXY, timeout=30)
    t0 = time.monotonic()
    s.sendall(b"G")
    rd = Reader(s)
    head = rd.head()
    code = parse_head(head)[0] if head else "EOF"
    print(code, int(time.monotonic() - t0))


modes = {"http": lambda a: cmd_http(a), "socks": lambda a: cmd_socks(*a),
         "tcp": lambda a: cmd_tcp(*a), "selfconnect": lambda a: cmd_selfconnect(),
         "many": lambda a: cmd_many(*a), "slow": lambda a: cmd_slow()}
try:
    modes[sys.argv[1]](sys.argv[2:])
except OSError as e:
    print(err_name(e))
