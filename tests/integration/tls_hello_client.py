#!/usr/bin/env python3
"""A TLS client whose bytes on the wire are ours to shape, for t_tls_hello.sh.

tls_hello_client.py VIA HOST PORT SHAPE SNI [SNI2]
  VIA    connect (HTTP CONNECT at 127.0.0.1:3128), socks (SOCKS5 by name at :1080) or
         direct (a plain connection to HOST: captured inside the sandbox)
  SHAPE  plain | alert (a warning alert record before the ClientHello) | records (the
         ClientHello re-cut into 40-byte records) | segments (sent 7 bytes at a time) |
         ech (an encrypted_client_hello extension added; SNI is the outer name)
  SNI    the name in the ClientHello ("-": none); SNI2, when given, replaces the name in
         the second ClientHello after a HelloRetryRequest

The handshake runs in Python's ssl (OpenSSL) through memory BIOs, so its flights can
be rewritten on their way out. Prints the tunnel's answer, "hrr" when the origin asked
for a retry, then "served CN=NAME" (the certificate the origin chose) and the first
line the origin sends after a "GET / HTTP/1.0" request, or "tls error: REASON" /
"closed"."""
import socket
import ssl
import sys
import time

HRR = bytes.fromhex("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")
WARNING_ALERT = bytes.fromhex("15030100020 15a".replace(" ", ""))

via, host, port, shape, sni = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
sni2 = sys.argv[6] if len(sys.argv) > 6 else None


def tunnel():
    if via == "direct":
        return socket.create_connection((host, port), timeout=10)
    if via == "connect":
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(1)
            if not b:
                break
            head += b
        print(head.split(b"\r\n")[0].decode())
        return s
    s = socket.create_connection(("127.0.0.1", 1080), timeout=10)
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + port.to_bytes(2, "big"))
    print("socks %02x" % s.recv(10)[1])
    return s


def records(data):
    """(type, body) of each whole record in data."""
    out, off = [], 0
    while off + 5 <= len(data):
        n = int.from_bytes(data[off + 3:off + 5], "big")
        out.append((data[off], data[off + 5:off + 5 + n]))
        off += 5 + n
    return out


def rec(typ, body):
    return bytes([typ, 3, 3]) + len(body).to_bytes(2, "big") + body


def recut(data, size):
    """The handshake bytes of data's records, re-cut into records of `size` bytes."""
    hs = b"".join(b for t, b in records(data) if t == 0x16)
    return b"".join(rec(0x16, hs[i:i + size]) for i in range(0, len(hs), size))


def rename(flight, name):
    """The flight with its ClientHello's server_name replaced by `name` (lengths
    rewritten at every level)."""
    out = b""
    for t, body in records(flight):
        if t == 0x16 and body[0] == 1:
            m = body[4:]
            off = 2 + 32
            off += 1 + m[off]
            off += 2 + int.from_bytes(m[off:off + 2], "big")
            off += 1 + m[off]
            exts, e, new = m[off + 2:], 0, b""
            while e < len(exts):
                et = int.from_bytes(exts[e:e + 2], "big")
                el = int.from_bytes(exts[e + 2:e + 4], "big")
                if et == 0:
                    n = name.encode()
                    lst = b"\x00" + len(n).to_bytes(2, "big") + n
                    val = len(lst).to_bytes(2, "big") + lst
                    new += b"\x00\x00" + len(val).to_bytes(2, "big") + val
                else:
                    new += exts[e:e + 4 + el]
                e += 4 + el
            m = m[:off] + len(new).to_bytes(2, "big") + new
            body = b"\x01" + len(m).to_bytes(3, "big") + m
        out += rec(t, body)
    return out


def add_ech(flight):
    """The flight with an encrypted_client_hello extension (outer form, RFC draft-ietf-
    tls-esni: HKDF-SHA256/AES-128-GCM, a config id, a 32-byte enc, a payload) appended
    to its ClientHello: what an ECH client sends, its server_name the outer name."""
    out = b""
    for t, body in records(flight):
        if t == 0x16 and body[0] == 1:
            m = body[4:]
            off = 2 + 32
            off += 1 + m[off]
            off += 2 + int.from_bytes(m[off:off + 2], "big")
            off += 1 + m[off]
            exts = m[off + 2:]
            val = b"\x00\x00\x01\x00\x01\x07" + (32).to_bytes(2, "big") + bytes(range(32)) + \
                (48).to_bytes(2, "big") + bytes(48)
            exts += b"\xfe\x0d" + len(val).to_bytes(2, "big") + val
            m = m[:off] + len(exts).to_bytes(2, "big") + exts
            body = b"\x01" + len(m).to_bytes(3, "big") + m
        out += rec(t, body)
    return out


def send_first(s, data):
    if shape == "ech":
        s.sendall(add_ech(data))
    elif shape == "alert":
        s.sendall(WARNING_ALERT + data)
    elif shape == "records":
        s.sendall(recut(data, 40))
    elif shape == "segments":
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(0, len(data), 7):
            s.sendall(data[i:i + 7])
            time.sleep(0.002)
    else:
        s.sendall(data)


def main():
    s = tunnel()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations("certs.pem")
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=None if sni == "-" else sni)
    flights, hrr = 0, False
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLError as e:
            print("tls error: %s" % e.reason)
            return
        data = out.read()
        if data:
            flights += 1
            if flights == 1:
                send_first(s, data)
            else:
                s.sendall(rename(data, sni2) if hrr and sni2 else data)
        try:
            got = s.recv(65536)
        except OSError as e:
            print("closed: %s" % e)
            return
        if not got:
            print("closed")
            return
        if not hrr and HRR in got:
            hrr = True
            print("hrr")
        inc.write(got)
    obj.write(b"GET / HTTP/1.0\r\n\r\n")  # s_server -www answers it, the echo server echoes it
    s.sendall(out.read())
    cn = dict(x[0] for x in obj.getpeercert()["subject"]).get("commonName")
    print("served CN=%s" % cn)
    line = b""
    try:
        while b"\n" not in line:
            try:
                line += obj.read(100)
            except ssl.SSLWantReadError:
                got = s.recv(65536)
                if not got:
                    break
                inc.write(got)
    except (ssl.SSLError, OSError):
        pass
    if line:
        print(line.decode(errors="replace").strip())


main()
