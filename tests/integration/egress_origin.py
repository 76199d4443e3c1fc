"""Loopback origins for t_egress*.sh, run on the host side (never in the sandbox).

usage: egress_origin.py echo|git|upload BIND PORTFILE LOG [ROOT]

echo: GET /hello answers "hello from BIND"; GET /echo... answers "origin BIND", the
      request line and every field as received, so the test can see exactly what the
      proxy forwarded (Host added, hop-by-hop fields dropped).
git:  CGI server over ROOT (cgi-bin/git runs git http-backend), HTTP/1.0.
upload: PUT/POST with a chunked or Content-Length body: the body is written to
      LOG.body and the answer is "got N SHA256 FRAMING", FRAMING being "length",
      "chunked-canonical" (lower-case hex without leading zeros, no extensions, no
      trailers: what halo-run's proxy re-encodes to) or "chunked-other"; a chunked
      body that ends early is logged "UP truncated" and not answered. GET answers
      "hello from upload".

Every accepted connection is logged as "CONN peer" before any byte is read, every
request as "REQ ...": a row that must never reach an origin checks that the CONN count
did not move. The port is chosen by the kernel and written to PORTFILE once listening.
"""
import hashlib
import http.server
import os
import re
import socket
import socketserver
import sys

kind, bind, portfile, log = sys.argv[1:5]
root = sys.argv[5] if len(sys.argv) > 5 else None


def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path.startswith("/echo"):
            fields = "".join("%s: %s\n" % kv for kv in self.headers.items())
            body = "origin %s\n%s\n%s" % (bind, self.requestline, fields)
        else:
            body = "hello from %s\n" % bind
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        note("REQ %s %s" % (self.client_address[0], fmt % args))


class Upload(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def chunked_body(self):
        body, canonical = bytearray(), True
        while True:
            line = self.rfile.readline(8192)
            if not line.endswith(b"\r\n"):
                return None, False
            size = line[:-2]
            canonical = canonical and re.fullmatch(rb"0|[1-9a-f][0-9a-f]*", size) is not None
            n = int(size.split(b";")[0], 16)
            if n == 0:
                while True:  # trailers, if any
                    t = self.rfile.readline(8192)
                    if t == b"\r\n":
                        return bytes(body), canonical
                    if not t.endswith(b"\r\n"):
                        return None, False
                    canonical = False
            data = self.rfile.read(n)
            if len(data) != n or self.rfile.read(2) != b"\r\n":
                return None, False
            body += data

    def do_PUT(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body, canonical = self.chunked_body()
            framing = "chunked-canonical" if canonical else "chunked-other"
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            framing = "length"
        if body is None:
            note("UP truncated")
            self.close_connection = True
            return
        with open(log + ".body", "wb") as f:
            f.write(body)
        note("UP %d %s" % (len(body), framing))
        self.answer("got %d %s %s\n" % (len(body), hashlib.sha256(body).hexdigest(), framing))

    do_POST = do_PUT

    def do_GET(self):
        self.answer("hello from upload\n")

    def answer(self, text):
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        note("REQ %s %s" % (self.client_address[0], fmt % args))


class Git(http.server.CGIHTTPRequestHandler):
    cgi_directories = ["/cgi-bin"]

    def log_message(self, fmt, *args):
        note("REQ %s %s" % (self.client_address[0], fmt % args))


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024  # 200 tunnels arrive at once
    daemon_threads = True

    def server_bind(self):
        # HTTPServer.server_bind calls getfqdn(), a reverse lookup that could leave
        # the host as a DNS query: skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = bind, self.server_address[1]

    def verify_request(self, request, client_address):
        note("CONN %s" % client_address[0])
        return True


if ":" in bind:
    Server.address_family = socket.AF_INET6
if root:
    os.chdir(root)
srv = Server((bind, 0), {"echo": Echo, "git": Git, "upload": Upload}[kind])
# An origin on ::1 alone holds 127.0.0.1 at its port too, bound and never listening
# (connect refused there): no other process (the other user's pass, a unit test beside
# it) can take that port on 127.0.0.1 and answer what the tests expect refused there.
hold = []
if bind == "::1":
    for _ in range(50):
        try:
            h = socket.socket(socket.AF_INET)
            h.bind(("127.0.0.1", srv.server_address[1]))
            hold.append(h)
            break
        except OSError:
            h.close()
            srv.server_close()
            srv = Server((bind, 0), {"echo": Echo, "git": Git, "upload": Upload}[kind])
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
