#!/usr/bin/env python3
"""An HTTPS origin on loopback for t_tls.sh: CERT KEY PORTFILE LOG GITROOT.

HTTP/1.1 with keep-alive. The token it expects is in $HALO_TEST_TOKEN of ITS OWN
environment (never on disk). Its ordinary answers never echo the token back: they say
auth=ok, none or other, and how many Authorization fields came. The echo endpoints
below do echo it, on purpose, as careless origins do; the proxy must mask it:
  TRACE, TRACK      the request head as received (message/http), as Apache does
  /reflect          the request's fields in the body, Authorization also in X-Echo-Auth
  /reflect-chunked?N  the same in chunks of N bytes (the value straddles them)
  /reflect-eof      the same, delimited by the connection's close
  /reflect-big?R    R times (16380 dots, the Authorization value): straddles reads
  /gzip             the reflection gzip-compressed, whatever was asked
  /accept-encoding  the Accept-Encoding received ("-" when none)
  /echo...          "auth=... n_auth=N method=M path=P"
  /redirect         302 to https://plain.test:PORT/echo (another host)
  /repos/...        "repo ok"
  /upload (POST)    "got N bytes" (Content-Length or chunked)
  /chunked          "one two three" as a chunked response
  /npm/NAME         an npm packument (only with the right token, else 401)
  /git/...          git http-backend (smart HTTP), only with the right token (else 401)
Each request is logged: "METHOD PATH auth=... n_auth=N"."""
import gzip
import http.server
import json
import os
import re
import socketserver
import ssl
import subprocess
import sys
import threading

cert, key, portfile, logfile, gitroot = sys.argv[1:6]
TOKEN = os.environ["HALO_TEST_TOKEN"]
lock = threading.Lock()


def log(line):
    with lock, open(logfile, "a") as f:
        f.write(line + "\n")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def auth(self):
        vals = self.headers.get_all("Authorization") or []
        state = "none" if not vals else ("ok" if vals == ["Bearer " + TOKEN] else "other")
        return state, len(vals)

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def send(self, code, text, extra=()):
        data = text.encode()
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def handle_any(self):
        state, n = self.auth()
        log("%s %s auth=%s n_auth=%d" % (self.command, self.path, state, n))
        if self.path.startswith("/git/"):
            return self.git(state)
        body = self.body() if self.command == "POST" else b""
        if self.path.startswith("/echo"):
            self.send(200, "auth=%s n_auth=%d method=%s path=%s\n" % (state, n, self.command, self.path))
        elif self.path == "/redirect":
            port = self.server.server_address[1]
            self.send(302, "moved\n", [("Location", "https://plain.test:%d/echo" % port)])
        elif self.path.startswith("/npm/"):
            if state != "ok":
                return self.send(401, '{"error":"token required"}\n')
            name = self.path[5:].split("?")[0]
            port = self.server.server_address[1]
            doc = {"name": name, "dist-tags": {"latest": "1.2.3"},
                   "versions": {"1.2.3": {"name": name, "version": "1.2.3", "dist": {
                       "tarball": "https://secure.test:%d/npm/-/%s-1.2.3.tgz" % (port, name),
                       "shasum": "0" * 40}}}}
            self.send(200, json.dumps(doc), [("X-Kind", "npm")])
        elif self.path.startswith("/repos/"):
            self.send(200, "repo ok\n")
        elif self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if self.command != "HEAD":
                for part in (b"one ", b"two ", b"three\n"):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
        elif self.path.startswith("/reflect"):
            self.reflect()
        elif self.path == "/gzip":
            data = gzip.compress(self.fields())
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/accept-encoding":
            self.send(200, self.headers.get("Accept-Encoding", "-") + "\n")
        elif self.path == "/upload":
            self.send(200, "got %d bytes\n" % len(body))
        else:
            self.send(404, "no such thing\n")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = handle_any

    def fields(self):
        return "".join("%s: %s\r\n" % (k, v) for k, v in self.headers.items()).encode()

    def echo_head(self):
        state, n = self.auth()
        log("%s %s auth=%s n_auth=%d" % (self.command, self.path, state, n))
        data = ("%s\r\n" % self.requestline).encode() + self.fields()
        self.send_response(200)
        self.send_header("Content-Type", "message/http")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_TRACE = do_TRACK = echo_head

    def reflect(self):
        path, _, arg = self.path.partition("?")
        auth = self.headers.get("Authorization", "-")
        if path == "/reflect-big":
            data = (b"." * 16380 + auth.encode()) * int(arg or "1")
        elif path == "/reflect-cut":  # an error page quoting the request cut at N bytes
            data = ("bad request: Authorization: %s" % auth)[:28 + int(arg or "0")].encode() + b"...\n"
        elif path in ("/reflect-range", "/reflect-206"):
            return self.reflect_range(path, arg, ("auth=%s\n" % auth).encode())
        else:
            data = b"reflected:\r\n" + self.fields()
        log("sent %d bytes" % len(data))
        self.send_response(200)
        self.send_header("X-Echo-Auth", auth)
        if path == "/reflect-chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            n = int(arg or "7")
            for i in range(0, len(data), n):
                part = data[i:i + n]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/reflect-eof":
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def reflect_range(self, path, arg, data):
        """/reflect-range honours "Range: bytes=A-B" (a piece of the echo, as origins
        serving ranges of any body do); /reflect-206?A sends data[A:] as 206 unasked."""
        rng = self.headers.get("Range")
        log("range=%s" % (rng or "-"))
        m = re.match(r"bytes=(\d+)-(\d*)$", rng or "")
        if path == "/reflect-206":
            a, b = int(arg or "0"), len(data) - 1
        elif m:
            a = int(m.group(1))
            b = min(int(m.group(2)), len(data) - 1) if m.group(2) else len(data) - 1
        else:
            return self.send(200, data.decode())
        self.send_response(206)
        self.send_header("Content-Range", "bytes %d-%d/%d" % (a, b, len(data)))
        self.send_header("Content-Length", str(b + 1 - a))
        self.end_headers()
        self.wfile.write(data[a:b + 1])

    def git(self, state):
        if state != "ok":
            return self.send(401, "token required\n", [("WWW-Authenticate", 'Bearer realm="t"')])
        path, _, query = self.path[4:].partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=gitroot, GIT_HTTP_EXPORT_ALL="1",
                   PATH_INFO=path, QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   REMOTE_ADDR="127.0.0.1")
        env.pop("HALO_TEST_TOKEN", None)
        body = self.body() if self.command == "POST" else b""
        if self.headers.get("Content-Encoding") == "gzip":
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        env["CONTENT_LENGTH"] = str(len(body))
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                             timeout=60).stdout
        head, _, data = out.partition(b"\r\n\r\n")
        if not _:
            head, _, data = out.partition(b"\n\n")
        code, hdrs = 200, []
        for line in head.decode().splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                code = int(v.split()[0])
            elif k:
                hdrs.append((k, v.strip()))
        self.send_response(code)
        for k, v in hdrs:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = S(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
