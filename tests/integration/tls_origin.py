#!/usr/bin/env python3
"""A TLS origin on loopback for t_sni.sh: CERT KEY BIND PORTFILE LOG.

Each connection is logged first as raw bytes: "CONN 0" when the peer closed before
sending anything (what a refused tunnel must look like), else the TLS handshake is
run and "TLS sni=NAME" logged, then one line is sent: "hello over tls NAME"."""
import socket
import ssl
import sys
import threading

cert, key, bind, portfile, logfile = sys.argv[1:6]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
seen = {}


def on_sni(sock, name, _ctx):
    seen[id(sock)] = name


ctx.sni_callback = on_sni
lock = threading.Lock()


def log(line):
    with lock, open(logfile, "a") as f:
        f.write(line + "\n")


def serve(c):
    c.settimeout(5)
    try:
        first = c.recv(1, socket.MSG_PEEK)
    except OSError:
        first = b""
    if not first:
        log("CONN 0")
        c.close()
        return
    try:
        s = ctx.wrap_socket(c, server_side=True)
        name = seen.get(id(s), None)
        log("TLS sni=%s" % name)
        s.sendall(("hello over tls %s\n" % name).encode())
        s.close()
    except (OSError, ssl.SSLError) as e:
        log("BAD %s" % e.__class__.__name__)
        c.close()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((bind, 0))
srv.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
import os

os.rename(portfile + ".tmp", portfile)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
