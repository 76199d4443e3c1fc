"""Loopback registries for the workflow tests (t_wf_*.sh), run on the host side.

usage: wf_origin.py BIND PORTFILE LOG ROOT [DELAY_MS]

Serves the static tree ROOT (npm packuments and tarballs, a Go module proxy, a PEP 503
index, cargo's config.json and .crate files), HTTP/1.1 with Content-Length, and
/git/<repo>/... through `git http-backend` (GIT_PROJECT_ROOT=ROOT/git) as the current
user. Unlike python's CGIHTTPRequestHandler it decodes chunked request bodies, which
git sends for any push larger than http.postBuffer (1 MiB).

DELAY_MS delays every answer a little, like a registry across a real network, so that
a warm cache is visible in the timings. Every connection is logged as "CONN peer",
every request as "REQ METHOD PATH STATUS". The kernel picks the port; it is written to
PORTFILE once listening. Nothing here ever connects anywhere.
"""
import http.server
import os
import socketserver
import subprocess
import sys
import time

bind, portfile, log, root = sys.argv[1:5]
delay = int(sys.argv[5]) / 1000.0 if len(sys.argv) > 5 else 0.0
MAX_BODY = 64 << 20  # a bound on what one request may upload


def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, *a, **kw):
        super().__init__(*a, directory=root, **kw)

    def log_message(self, fmt, *args):
        pass

    def log_request(self, code="-", size="-"):
        note("REQ %s %s %s" % (self.command, self.path, code))

    def do_GET(self):
        time.sleep(delay)
        if self.path.startswith("/git/"):
            return self.git(b"")
        return super().do_GET()


    def do_POST(self):
        if not self.path.startswith("/git/"):
            return self.send_error(405)
        body = self.read_body()
        if body is None:
            return self.send_error(400, "bad request body")
        return self.git(body)

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = bytearray()
            while len(out) <= MAX_BODY:
                line = self.rfile.readline(100)
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    return None
                if size == 0:
                    while self.rfile.readline(1000) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline(3)
            return None
        n = int(self.headers.get("Content-Length", "0") or "0")
        return self.rfile.read(n) if 0 <= n <= MAX_BODY else None

    def git(self, body):
        path, _, query = self.path[len("/git") :].partition("?")
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": os.path.join(root, "git"),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.path.join(root, "gitconfig"),
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_USER": "wf",  # http-backend refuses receive-pack to anonymous users
            "GIT_HTTP_MAX_REQUEST_BUFFER": str(MAX_BODY),
        }
        enc = self.headers.get("Content-Encoding")
        if enc:
            env["HTTP_CONTENT_ENCODING"] = enc
        p = subprocess.run(["git", "http-backend"], input=body, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        head, _, data = p.stdout.partition(b"\r\n\r\n")
        status, fields = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                fields.append((k, v.strip()))
        self.send_response(status)
        for k, v in fields:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        if p.returncode:
            note("GITERR %s" % p.stderr.decode(errors="replace").strip())


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def server_bind(self):
        # skip HTTPServer.server_bind's getfqdn(): a reverse lookup could leave the host
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = bind, self.server_address[1]

    def verify_request(self, request, client_address):
        note("CONN %s" % client_address[0])
        return True


srv = Server((bind, 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
