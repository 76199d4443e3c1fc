#!/bin/bash
# Egress bypass classes, end to end: every row is a raw request sent from INSIDE the
# sandbox to halo-run's proxy on the sandbox's loopback (tests/integration/
# egress_client.py), so the proxy, not a client library, decides it; each row asserts
# the answer, X-Halo-Deny or the body, the audit record, and that an origin never saw
# a connection it should not. Names come from a bind-mounted /etc/hosts (egress_lib.sh).
#
# Classes: case, trailing dot, IPv4 spellings, IPv4-mapped/compatible IPv6, zone ids,
# brackets around names, userinfo, percent-escapes, non-ASCII, over-long names and
# labels, CONNECT/absolute target vs Host, smuggling shapes, hop-by-hop fields,
# keep-alive re-decision, SOCKS5 per ATYP, DNS rebinding to loopback/unspecified,
# mixed answers; then, only if every loopback refusal held, private and metadata
# answers (refused after resolution, before any connect: no packet leaves loopback).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

start_origin o1 echo 127.0.0.1
start_origin o2 echo 127.0.0.2
start_origin o6 echo ::1
O1=$(wait_port o1) O2=$(wait_port o2) O6=$(wait_port o6)

# ------------------------------------------------------------ case and dots
http_rows <<'EOF'
control: origin.test       | main | get origin.test:@O1@  | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
case: ORIGIN.TEST          | main | get ORIGIN.TEST:@O1@  | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
trailing dot: Origin.Test. | main | get Origin.Test.:@O1@ | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
two trailing dots          | main | get origin.test..:@O1@ | 403 | origin.test.. (invalid host: more than one trailing dot) | http origin.test.. @O1@ deny - -
case: DENIED.TEST          | main | get DENIED.TEST:@O1@  | 403 | denied.test (deniedDomains[0] denied.test) | http denied.test @O1@ deny - -
trailing dot: denied.test. | main | get denied.test.:@O1@ | 403 | denied.test (deniedDomains[0] denied.test) | http denied.test @O1@ deny - -
CONNECT case+dot           | main | connect ORIGIN.test.:@O1@ | 200 | hello from 127.0.0.1 | connect origin.test @O1@ allow 127.0.0.1 -
CONNECT DENIED.TEST.       | main | connect DENIED.TEST.:@O1@ | 403 | denied.test (deniedDomains[0] denied.test) | connect denied.test @O1@ deny - -
EOF

# ----------------------------------------------------- IPv4 spellings of 127.0.0.1
# The allowlist holds the literal 127.0.0.1 and allowPrivate covers it, so a proxy
# that canonicalised these spellings would connect: each must be refused as invalid.
http_rows <<'EOF'
control: 127.0.0.1        | main | get 127.0.0.1:@O1@  | 200 | hello from 127.0.0.1 | http 127.0.0.1 @O1@ allow 127.0.0.1 -
decimal 2130706433        | main | get 2130706433:@O1@ | 403 | 2130706433 (invalid host: non-canonical IPv4 address: a single number) | http 2130706433 @O1@ deny - -
octal 0177.0.0.1          | main | get 0177.0.0.1:@O1@ | 403 | 0177.0.0.1 (invalid host: non-canonical IPv4 address: leading zero in '0177' (octal?)) | http 0177.0.0.1 @O1@ deny - -
hex 0x7f.0.0.1            | main | get 0x7f.0.0.1:@O1@ | 403 | 0x7f.0.0.1 (invalid host: non-canonical IPv4 address: hex part '0x7f') | http 0x7f.0.0.1 @O1@ deny - -
short 127.1               | main | get 127.1:@O1@      | 403 | 127.1 (invalid host: non-canonical IPv4 address: short form with 2 parts) | http 127.1 @O1@ deny - -
leading zero 127.0.0.01   | main | get 127.0.0.01:@O1@ | 403 | 127.0.0.01 (invalid host: non-canonical IPv4 address: leading zero in '01' (octal?)) | http 127.0.0.01 @O1@ deny - -
CONNECT decimal           | main | connect 2130706433:@O1@ | 403 | 2130706433 (invalid host: non-canonical IPv4 address: a single number) | connect 2130706433 @O1@ deny - -
CONNECT hex               | main | connect 0x7f000001:@O1@ | 403 | 0x7f000001 (invalid host: non-canonical IPv4 address: hex part '0x7f000001') | connect 0x7f000001 @O1@ deny - -
CONNECT short             | main | connect 127.1:@O1@  | 403 | 127.1 (invalid host: non-canonical IPv4 address: short form with 2 parts) | connect 127.1 @O1@ deny - -
EOF

# ------------------------------------------------ IPv6 forms carrying 127.0.0.1
# policy_cidr_match: an IPv4 CIDR covers the IPv4-mapped form of its addresses, so
# allowPrivate 127.0.0.1/32 lets [::ffff:127.0.0.1] through (it dials 127.0.0.1);
# the compatible form ::127.0.0.1 is not mapped: loopback, not covered, refused.
http_rows <<'EOF'
mapped [::ffff:127.0.0.1], covered  | main   | get [::ffff:127.0.0.1]:@O1@ | 200 | hello from 127.0.0.1 | http ::ffff:127.0.0.1 @O1@ allow ::ffff:127.0.0.1 -
mapped hex [::ffff:7f00:1], covered | main   | get [::ffff:7f00:1]:@O1@    | 200 | hello from 127.0.0.1 | http ::ffff:127.0.0.1 @O1@ allow ::ffff:127.0.0.1 -
mapped, no allowPrivate             | nopriv | get [::ffff:127.0.0.1]:@O1@ | 403 | ::ffff:127.0.0.1 (address ::ffff:127.0.0.1 is loopback, not in allowPrivate) | http ::ffff:127.0.0.1 @O1@ deny ::ffff:127.0.0.1 loopback
compatible [::127.0.0.1]            | main   | get [::127.0.0.1]:@O1@      | 403 | ::127.0.0.1 (address ::127.0.0.1 is loopback, not in allowPrivate) | http ::127.0.0.1 @O1@ deny ::127.0.0.1 loopback
control: [::1]                      | main   | get [::1]:@O6@              | 200 | hello from ::1 | http ::1 @O6@ allow ::1 -
[::1], no allowPrivate              | nopriv | get [::1]:@O6@              | 403 | ::1 (address ::1 is loopback, not in allowPrivate) | http ::1 @O6@ deny ::1 loopback
CONNECT mapped, no allowPrivate     | nopriv | connect [::ffff:127.0.0.1]:@O1@ | 403 | ::ffff:127.0.0.1 (address ::ffff:127.0.0.1 is loopback, not in allowPrivate) | connect ::ffff:127.0.0.1 @O1@ deny ::ffff:127.0.0.1 loopback
EOF

# --------------------------- zone ids, brackets, userinfo, escapes, non-ASCII, length
http_rows <<'EOF'
zone id [fe80::1%25lo]       | main | get [fe80::1%25lo]:@O1@ | 400 | target authority: '%' in the host (percent-escapes and zone ids are not accepted) |
zone id [::1%lo]             | main | get [::1%lo]:@O6@ | 400 | target authority: '%' in the host (percent-escapes and zone ids are not accepted) |
CONNECT zone id              | main | connect [::1%25lo]:@O6@ | 400 | CONNECT target: '%' in the host (percent-escapes and zone ids are not accepted) |
brackets [origin.test]       | main | get [origin.test]:@O1@ | 400 | target authority: malformed IPv6 literal in the host |
CONNECT [origin.test]        | main | connect [origin.test]:@O1@ | 400 | CONNECT target: malformed IPv6 literal in the host |
userinfo user@origin.test    | main | GET http://user@origin.test:@O1@/hello HTTP/1.1\r\nHost: origin.test:@O1@\r\n\r\n | 400 | target authority: userinfo ('@') in the target is not accepted |
userinfo denied.test@origin  | main | GET http://origin.test:@O1@@denied.test/ HTTP/1.1\r\n\r\n | 400 | target authority: userinfo ('@') in the target is not accepted |
CONNECT userinfo             | main | CONNECT user:pw@origin.test:@O1@ HTTP/1.1\r\n\r\n | 400 | CONNECT target: userinfo ('@') in the target is not accepted |
percent origin%2etest        | main | get origin%2etest:@O1@ | 400 | target authority: '%' in the host (percent-escapes and zone ids are not accepted) |
CONNECT percent              | main | connect origin%2Etest:@O1@ | 400 | CONNECT target: '%' in the host (percent-escapes and zone ids are not accepted) |
non-ASCII orig\xc3\xafn.test | main | get orig\xc3\xafn.test:@O1@ | 400 | request target contains a byte outside visible ASCII |
non-ASCII in Host only       | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: orig\xc3\xafn.test:@O1@\r\n\r\n | 400 | malformed Host header: host contains a byte outside visible ASCII |
control: 253-byte name       | main | get @N253@:@O1@ | 200 | hello from 127.0.0.1 | http @N253@ @O1@ allow 127.0.0.1 -
254-byte name                | main | get @N254@:@O1@ | 403 | @N254@ (invalid host: name longer than 253 characters (254)) | http @N254@ @O1@ deny - -
control: 63-byte label       | main | get @L63@.long.test:@O1@ | 200 | hello from 127.0.0.1 | http @L63@.long.test @O1@ allow 127.0.0.1 -
64-byte label                | main | get @L64@.long.test:@O1@ | 403 | @L64@.long.test (invalid host: label longer than 63 characters (64)) | http @L64@.long.test @O1@ deny - -
allowed, not in hosts: no DNS | main | get nowhere.long.test:@O1@ | 502 | halo-run proxy: nowhere.long.test:@O1@: no such host | http nowhere.long.test @O1@ allow - -
EOF

# ------------------------------------------- URL shapes that confuse URL parsers
http_rows <<'EOF'
scheme and host upper case     | main | GET HTTP://ORIGIN.TEST:@O1@/hello HTTP/1.1\r\n\r\n | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
@ in the path is not userinfo  | main | GET http://origin.test:@O1@/@denied.test HTTP/1.1\r\n\r\n | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
backslash before @             | main | GET http://origin.test:@O1@\\@denied.test/ HTTP/1.1\r\n\r\n | 400 | target authority: backslash in the host |
fragment hiding an authority   | main | GET http://denied.test#@origin.test:@O1@/ HTTP/1.1\r\n\r\n | 400 | fragment in the request target |
port with a leading zero       | main | get origin.test:0@O1@ | 400 | target authority: port has leading zeros |
port 0                         | main | connect origin.test:0 | 400 | CONNECT target: port out of range 1-65535 |
port out of range              | main | connect origin.test:65536 | 400 | CONNECT target: port out of range 1-65535 |
two ports                      | main | connect origin.test:80:@O1@ | 400 | CONNECT target: more than one ':' in the authority (IPv6 needs [brackets]) |
bare IPv6 without brackets     | main | connect ::1:@O6@ | 400 | CONNECT target: more than one ':' in the authority (IPv6 needs [brackets]) |
https:// absolute form         | main | GET https://origin.test:@O1@/ HTTP/1.1\r\n\r\n | 400 | https:// is not forwarded: use CONNECT for TLS |
origin-form, not a proxy request | main | GET /hello HTTP/1.1\r\nHost: origin.test:@O1@\r\n\r\n | 400 | not a proxy request (origin-form target) |
EOF

# ----------------------------------------------------- target versus Host header
http_rows <<'EOF'
CONNECT Host names another host  | main | CONNECT origin.test:@O1@ HTTP/1.1\r\nHost: denied.test:@O1@\r\n\r\n | 400 | Host header disagrees with the target |
CONNECT Host another port        | main | CONNECT origin.test:@O1@ HTTP/1.1\r\nHost: origin.test:@P1@\r\n\r\n | 400 | Host header disagrees with the target |
CONNECT Host without port agrees | main | CONNECT origin.test:@O1@ HTTP/1.1\r\nHost: ORIGIN.test\r\n\r\n | 200 | hello from 127.0.0.1 | connect origin.test @O1@ allow 127.0.0.1 -
CONNECT two Host fields          | main | CONNECT origin.test:@O1@ HTTP/1.1\r\nHost: origin.test:@O1@\r\nHost: denied.test\r\n\r\n | 400 | duplicate Host header |
absolute Host another host: replaced | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: denied.test:@O1@\r\n\r\n | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
absolute Host without port: replaced | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: origin.test\r\n\r\n | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
absolute Host v6 vs name: replaced   | main | GET http://[::1]:@O6@/hello HTTP/1.1\r\nHost: localhost:@O6@\r\n\r\n | 200 | hello from ::1 | http ::1 @O6@ allow ::1 -
absolute two Host fields         | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: origin.test:@O1@\r\nHost: denied.test\r\n\r\n | 400 | duplicate Host header |
absolute malformed Host          | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: origin.test/x\r\n\r\n | 400 | malformed Host header: authority must be host:port only (no path, query or fragment) |
EOF

# -------------------------------------------------------------- smuggling shapes
http_rows <<'EOF'
CL + TE                | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: origin.test:@O1@\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n | 400 | Content-Length together with Transfer-Encoding |
duplicate CL           | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n | 400 | duplicate Content-Length |
CL list "0, 0"         | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nContent-Length: 0, 0\r\n\r\n | 400 | Content-Length is not a decimal number |
CL with sign           | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nContent-Length: +0\r\n\r\n | 400 | Content-Length is not a decimal number |
Content_Length lookalike | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nContent_Length: 0\r\n\r\n | 400 | header field name reads as Content-Length or Transfer-Encoding |
TE chunked, empty body | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost: origin.test:@O1@\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n | 200 | hello from 127.0.0.1 | http origin.test @O1@ allow 127.0.0.1 -
TE twice               | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n | 400 | duplicate Transfer-Encoding |
TE chunked, gzip       | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n | 400 | Transfer-Encoding: chunked is not the final coding |
TE gzip, chunked       | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n | 400 | Transfer-Encoding with more than one coding (only chunked is forwarded) |
TE xchunked            | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n | 400 | Transfer-Encoding other than chunked (only chunked is forwarded) |
TE in HTTP/1.0         | main | POST http://origin.test:@O1@/hello HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n | 400 | Transfer-Encoding in an HTTP/1.0 request |
Connection names TE    | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nConnection: transfer-encoding\r\nTransfer-Encoding: chunked\r\n\r\n | 400 | Connection header names an end-to-end field |
obs-fold               | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nX-A: 1\r\n X-B: 2\r\n\r\n | 400 | obs-fold (header line starting with whitespace) is not accepted |
NUL in a field         | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nX-A: a\x00b\r\n\r\n | 400 | NUL byte in the request head |
bare CR in a field     | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nX-A: a\rb\r\n\r\n | 400 | bare CR in the request head |
bare LF line end       | main | GET http://origin.test:@O1@/hello HTTP/1.1\nHost: origin.test:@O1@\r\n\r\n | 400 | bare LF line ending in the request head (CRLF required) |
space before colon     | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nHost : denied.test\r\n\r\n | 400 | whitespace before the colon in a header field |
CONNECT with TE        | main | CONNECT origin.test:@O1@ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n | 400 | Transfer-Encoding in a CONNECT request |
CONNECT duplicate CL   | main | CONNECT origin.test:@O1@ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n | 400 | duplicate Content-Length |
Connection names Host  | main | GET http://origin.test:@O1@/hello HTTP/1.1\r\nConnection: Host\r\n\r\n | 400 | Connection header names an end-to-end field |
EOF

# --------------------------------------- keep-alive: every request decided again
http_rows <<'EOF'
keep-alive: allowed then denied | main | get origin.test:@O1@ ;; get denied.test:@O1@ | 200 403 | denied.test (deniedDomains[0] denied.test) | http origin.test @O1@ allow 127.0.0.1 -;http denied.test @O1@ deny - -
keep-alive: allowed twice       | main | get origin.test:@O1@ ;; get two.test:@O2@ | 200 200 | hello from 127.0.0.2 | http origin.test @O1@ allow 127.0.0.1 -;http two.test @O2@ allow 127.0.0.2 -
EOF

# ----------------------- hop-by-hop fields dropped, Host added, version kept (echo)
echo_row() { # NAME RAW-REQUEST WANT-BODY
	local out
	out=$(hr main.yaml row.audit -- python3 client.py http "$2")
	expect "$1: 200" 200 "$(sed -n 1p <<<"$out")"
	expect "$1: what the origin received" "$3" "$(sed -n '3,$p' <<<"$out")"
}
echo_row "hop-by-hop fields dropped" \
	"GET http://origin.test:$O1/echo?q=1 HTTP/1.1\r\nHost: origin.test:$O1\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nTE: trailers\r\nUpgrade: h2c\r\nProxy-Authorization: Basic eDp5\r\nTrailer: X-T\r\nX-Keep: yes\r\n\r\n" \
	"origin 127.0.0.1
GET /echo?q=1 HTTP/1.1
Host: origin.test:$O1
X-Keep: yes
Connection: close"
echo_row "no Host: the proxy adds the target's" \
	"GET http://origin.test:$O1/echo HTTP/1.1\r\nX-A: 1\r\n\r\n" \
	"origin 127.0.0.1
GET /echo HTTP/1.1
Host: origin.test:$O1
X-A: 1
Connection: close"
# RFC 9112 3.2.2: the received Host is ignored, the URL's authority replaces it
# (libgit2 sends "Host: name" without the URL's port).
echo_row "Host without the URL's port: replaced" \
	"GET http://origin.test:$O1/echo HTTP/1.1\r\nHost: origin.test\r\nX-A: 1\r\n\r\n" \
	"origin 127.0.0.1
GET /echo HTTP/1.1
Host: origin.test:$O1
X-A: 1
Connection: close"
echo_row "Host naming a denied host: replaced" \
	"GET http://origin.test:$O1/echo HTTP/1.1\r\nX-A: 1\r\nHost: denied.test:$O1\r\n\r\n" \
	"origin 127.0.0.1
GET /echo HTTP/1.1
Host: origin.test:$O1
X-A: 1
Connection: close"
echo_row "HTTP/1.0 stays HTTP/1.0" \
	"GET http://[::1]:$O6/echo HTTP/1.0\r\n\r\n" \
	"origin ::1
GET /echo HTTP/1.0
Host: [::1]:$O6
Connection: close"

# ------------------------------------------------------------ SOCKS5 per ATYP
socks_rows <<'EOF'
socks domain origin.test        | main   | domain origin.test @O1@  | 00 | hello from 127.0.0.1 | socks5 origin.test @O1@ allow 127.0.0.1 -
socks domain ORIGIN.TEST.       | main   | domain ORIGIN.TEST. @O1@ | 00 | hello from 127.0.0.1 | socks5 origin.test @O1@ allow 127.0.0.1 -
socks domain denied.test        | main   | domain denied.test @O1@  | 02 | | socks5 denied.test @O1@ deny - -
socks domain 2130706433         | main   | domain 2130706433 @O1@   | 02 | | socks5 2130706433 @O1@ deny - -
socks domain [origin.test]      | main   | domain [origin.test] @O1@ | 02 | | socks5 [origin.test] @O1@ deny - -
socks domain origin.test:@O1@   | main   | domain origin.test:@O1@ @O1@ | 02 | | socks5 origin.test:@O1@ @O1@ deny - -
# Names the parser refuses are audited like every other refusal, the name escaped.
socks domain non-ASCII          | main   | domain orig\xc3\xafn.test @O1@ | 01 | | socks5 orig\xc3\xafn.test @O1@ deny - -
socks domain with NUL           | main   | domain origin.test\x00.evil @O1@ | 01 | | socks5 origin.test\x00.evil @O1@ deny - -
socks domain with a space       | main   | domain origin.test\x20x @O1@ | 01 | | socks5 origin.test\x20x @O1@ deny - -
socks domain with LF            | main   | domain origin.test\nx @O1@ | 01 | | socks5 origin.test\x0ax @O1@ deny - -
socks domain with CRLF          | main   | domain origin.test\r\nx @O1@ | 01 | | socks5 origin.test\x0d\x0ax @O1@ deny - -
socks domain with ESC           | main   | domain origin.test\x1b[2J @O1@ | 01 | | socks5 origin.test\x1b[2J @O1@ deny - -
socks IPv4 127.0.0.1, covered   | main   | v4 127.0.0.1 @O1@        | 00 | hello from 127.0.0.1 | socks5 127.0.0.1 @O1@ allow 127.0.0.1 -
socks IPv4 127.0.0.1, no allowPrivate | nopriv | v4 127.0.0.1 @O1@ | 02 | | socks5 127.0.0.1 @O1@ deny 127.0.0.1 loopback
socks IPv4 127.0.0.2, not listed | main  | v4 127.0.0.2 @O2@        | 02 | | socks5 127.0.0.2 @O2@ deny - -
socks IPv6 ::1, covered         | main   | v6 ::1 @O6@              | 00 | hello from ::1 | socks5 ::1 @O6@ allow ::1 -
socks IPv6 ::1, no allowPrivate | nopriv | v6 ::1 @O6@              | 02 | | socks5 ::1 @O6@ deny ::1 loopback
socks IPv6 ::ffff:127.0.0.1     | main   | v6 ::ffff:127.0.0.1 @O1@ | 00 | hello from 127.0.0.1 | socks5 ::ffff:127.0.0.1 @O1@ allow ::ffff:127.0.0.1 -
socks IPv6 ::127.0.0.1          | main   | v6 ::127.0.0.1 @O1@      | 02 | | socks5 ::127.0.0.1 @O1@ deny ::127.0.0.1 loopback
socks BIND refused              | main   | domain origin.test @O1@ 2 | 07 | |
socks UDP ASSOCIATE refused     | main   | domain origin.test @O1@ 3 | 07 | |
socks unknown ATYP              | main   | 5 - @O1@                 | 08 | |
EOF
OUT=$(hr main.yaml row.audit -- python3 client.py socks domain 'origin.test\x1b[2J\r\nhalo-run: forged' "$O1")
expect "socks hostile name: refused" "01" "$OUT"
expect "socks hostile name: the audit record escapes the name and names the reason" \
	'socks5 origin.test\x1b[2J\x0d\x0ahalo-run:\x20forged deny SOCKS5 domain name contains a byte outside visible ASCII' \
	"$(aud row.audit proto host decision rule)"
if grep -q $'\x1b\|^halo-run: forged' "$W/err" 2>/dev/null; then
	fail "socks hostile name: no raw control byte or forged line on stderr" "$(cat -v "$W/err" | head -3)"
else
	ok "socks hostile name: no raw control byte or forged line on stderr"
fi

# ---------------- DNS rebinding: allowed names whose answers are loopback/unspecified
# nopriv.yaml allows every name but has no allowPrivate: the answer alone refuses it.
gate=$_fails
http_rows <<'EOF'
rebind: origin.test -> 127.0.0.1          | nopriv | get origin.test:@O1@ | 403 | origin.test (address 127.0.0.1 is loopback, not in allowPrivate) | http origin.test @O1@ deny 127.0.0.1 loopback
rebind: two.test -> 127.0.0.2             | nopriv | get two.test:@O2@ | 403 | two.test (address 127.0.0.2 is loopback, not in allowPrivate) | http two.test @O2@ deny 127.0.0.2 loopback
rebind: rebind6.test -> ::1               | nopriv | get rebind6.test:@O6@ | 403 | rebind6.test (address ::1 is loopback, not in allowPrivate) | http rebind6.test @O6@ deny ::1 loopback
rebind: rebindmapped -> ::ffff:127.0.0.1  | nopriv | get rebindmapped.test:@O1@ | 403 | rebindmapped.test (address ::ffff:127.0.0.1 is loopback, not in allowPrivate) | http rebindmapped.test @O1@ deny ::ffff:127.0.0.1 loopback
rebind: rebindcompat -> ::127.0.0.1       | nopriv | get rebindcompat.test:@O1@ | 403 | rebindcompat.test (address ::127.0.0.1 is loopback, not in allowPrivate) | http rebindcompat.test @O1@ deny ::127.0.0.1 loopback
rebind: rebindzero -> 0.0.0.0             | nopriv | get rebindzero.test:@O1@ | 403 | rebindzero.test (address 0.0.0.0 is unspecified, not in allowPrivate) | http rebindzero.test @O1@ deny 0.0.0.0 unspecified
rebind CONNECT: origin.test               | nopriv | connect origin.test:@O1@ | 403 | origin.test (address 127.0.0.1 is loopback, not in allowPrivate) | connect origin.test @O1@ deny 127.0.0.1 loopback
rebind CONNECT: rebind6.test              | nopriv | connect rebind6.test:@O6@ | 403 | rebind6.test (address ::1 is loopback, not in allowPrivate) | connect rebind6.test @O6@ deny ::1 loopback
rebind CONNECT: rebindzero.test           | nopriv | connect rebindzero.test:@O1@ | 403 | rebindzero.test (address 0.0.0.0 is unspecified, not in allowPrivate) | connect rebindzero.test @O1@ deny 0.0.0.0 unspecified
mixed: 127.0.0.2 covered + 127.0.0.1 not  | mixed  | get mixed.test:@O2@ | 403 | mixed.test (address 127.0.0.1 is loopback, not in allowPrivate) | http mixed.test @O2@ deny 127.0.0.1 loopback
mixed: 127.0.0.2 covered + ::1 not        | mixed  | get mixed6.test:@O2@ | 403 | mixed6.test (address ::1 is loopback, not in allowPrivate) | http mixed6.test @O2@ deny ::1 loopback
mixed control: two.test alone             | mixed  | get two.test:@O2@ | 200 | hello from 127.0.0.2 | http two.test @O2@ allow 127.0.0.2 -
EOF
socks_rows <<'EOF'
rebind socks: origin.test   | nopriv | domain origin.test @O1@ | 02 | | socks5 origin.test @O1@ deny 127.0.0.1 loopback
rebind socks: rebindmapped  | nopriv | domain rebindmapped.test @O1@ | 02 | | socks5 rebindmapped.test @O1@ deny ::ffff:127.0.0.1 loopback
rebind socks: rebindzero    | nopriv | domain rebindzero.test @O1@ | 02 | | socks5 rebindzero.test @O1@ deny 0.0.0.0 unspecified
mixed socks: mixed.test     | mixed  | domain mixed.test @O2@ | 02 | | socks5 mixed.test @O2@ deny 127.0.0.1 loopback
EOF
# Real clients, env-driven, on the same refusals.
OUT=$(hr nopriv.yaml row.audit -- curl -sS -i --max-time 10 "http://rebindmapped.test:$O1/hello" | tr -d '\r')
expect_match "rebind, env-driven curl: 403" "^HTTP/1.1 403 Forbidden" "$OUT"
expect_match "rebind, env-driven curl: X-Halo-Deny" \
	"^X-Halo-Deny: rebindmapped.test \(address ::ffff:127.0.0.1 is loopback, not in allowPrivate\)$" "$OUT"
OUT=$(hr nopriv.yaml row.audit -- sh -c "curl -sS -p -v --max-time 10 http://rebind6.test:$O6/hello 2>&1" | tr -d '\r')
expect_match "rebind, curl -p (CONNECT): 403" "CONNECT tunnel failed, response 403" "$OUT"
expect "rebind, curl -p: audit" "connect rebind6.test $O6 deny ::1 loopback" "$(aud row.audit)"

# ------------------------------------------ private ranges and metadata (gated)
# Refused after resolution and before any connect (proxy/dial.c check_and_dial): run
# only when every loopback refusal above held, so a broken check never gets to try.
if [ "$_fails" -ne "$gate" ]; then
	fail "private and metadata rows" "skipped: $((_fails - gate)) loopback refusal rows failed above"
else
	http_rows <<'EOF'
metadata meta.test -> 169.254.169.254 | nopriv | get meta.test:80 | 403 | meta.test (address 169.254.169.254 is metadata, not in allowPrivate) | http meta.test 80 deny 169.254.169.254 metadata
private ten.test -> 10.0.0.1          | nopriv | get ten.test:80 | 403 | ten.test (address 10.0.0.1 is private, not in allowPrivate) | http ten.test 80 deny 10.0.0.1 private
CGNAT cgnat.test -> 100.64.0.1        | nopriv | connect cgnat.test:443 | 403 | cgnat.test (address 100.64.0.1 is cgnat, not in allowPrivate) | connect cgnat.test 443 deny 100.64.0.1 cgnat
ULA ula.test -> fd00::1               | nopriv | connect ula.test:443 | 403 | ula.test (address fd00::1 is unique-local, not in allowPrivate) | connect ula.test 443 deny fd00::1 unique-local
IMDSv6 imds6.test -> fd00:ec2::254    | nopriv | get imds6.test:80 | 403 | imds6.test (address fd00:ec2::254 is metadata, not in allowPrivate) | http imds6.test 80 deny fd00:ec2::254 metadata
EOF
	socks_rows <<'EOF'
metadata socks: meta.test | nopriv | domain meta.test 80 | 02 | | socks5 meta.test 80 deny 169.254.169.254 metadata
private socks: ten.test   | nopriv | domain ten.test 80  | 02 | | socks5 ten.test 80 deny 10.0.0.1 private
EOF
fi

finish
