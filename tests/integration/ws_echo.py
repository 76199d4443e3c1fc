"""A WebSocket echo origin for t_capture.sh, on the host side (never in the sandbox).

usage: ws_echo.py BIND PORTFILE LOG

RFC 6455 with the standard library only: the opening handshake (Sec-WebSocket-Accept),
then every text or binary message comes back as it was sent (unmasked, as a server
sends), a ping gets its pong and a close its close. Every accepted connection is logged
as "CONN peer" before any byte is read, the handshake as "WS path host": a row that
must never reach the origin checks that the CONN count did not move. Sockets time out
after 10 s; the caller bounds the process's life. The port is chosen by the kernel and
written to PORTFILE once listening.
"""
import base64
import hashlib
import os
import socketserver
import struct
import sys

bind, portfile, log = sys.argv[1:4]
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HEAD, MAX_PAYLOAD = 8192, 1 << 20


def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")


def read_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise EOFError
    return data


def frame(opcode, payload):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


class Echo(socketserver.StreamRequestHandler):
    def handshake(self):
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = self.rfile.readline(MAX_HEAD)
            if not line or len(head) > MAX_HEAD:
                raise EOFError
            head += line
        lines = head.decode("latin-1").split("\r\n")
        fields = dict((k.strip().lower(), v.strip()) for k, _, v in
                      (l.partition(":") for l in lines[1:] if l))
        key = fields.get("sec-websocket-key", "").encode()
        note("WS %s %s" % ((lines[0].split(" ") + ["", ""])[1], fields.get("host")))
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                          "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n"
                          % accept).encode())

    def handle(self):
        note("CONN %s" % self.client_address[0])
        self.request.settimeout(10)
        try:
            self.handshake()
            while True:
                b0, b1 = read_exact(self.rfile, 2)
                n = b1 & 0x7F
                if n == 126:
                    n = struct.unpack("!H", read_exact(self.rfile, 2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", read_exact(self.rfile, 8))[0]
                if n > MAX_PAYLOAD:
                    return
                mask = read_exact(self.rfile, 4) if b1 & 0x80 else b"\0\0\0\0"
                data = bytes(c ^ mask[i % 4] for i, c in enumerate(read_exact(self.rfile, n)))
                opcode = b0 & 0x0F
                if opcode in (1, 2):
                    self.wfile.write(frame(opcode, data))
                elif opcode == 9:
                    self.wfile.write(frame(10, data))
                elif opcode == 8:
                    self.wfile.write(frame(8, data[:2]))
                    return
        except (EOFError, OSError, ValueError):
            return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server((bind, 0), Echo)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
