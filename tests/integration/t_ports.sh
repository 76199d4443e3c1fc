#!/bin/bash
# host:port entries in allowedDomains and deniedDomains (issue 13, item 1), through the
# real sandbox and `halo-run check`: an entry with a port allows (or denies) that port
# only, a portless entry every port, deny wins, the matching entry is named in the
# 403, the audit record and check's output. Origins on loopback under test names
# (egress_lib.sh), both ports picked by the kernel.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

start_origin p1 echo 127.0.0.1
start_origin p2 echo 127.0.0.1
P1=$(wait_port p1) P2=$(wait_port p2)
cat >"$W/ports.yaml" <<EOF
egress:
  default: deny
  allowedDomains: ["origin.test:$P1", "*.long.test:$P2", two.test]
  deniedDomains: ["two.test:$P1"]
  allowPrivate: [127.0.0.1/32, 127.0.0.2/32]
EOF
chmod a+r "$W/ports.yaml"
# With -p, a refused CONNECT's status is curl's http_connect; an allowed one's http_code.
C=(curl -s --max-time 10 -o /dev/null -w '%{http_code}%{http_connect}' -p -x http://127.0.0.1:3128)

OUT=$(hr ports.yaml a.audit -- "${C[@]}" "http://origin.test:$P1/hello")
expect "origin.test:$P1 listed: its port is reached (CONNECT)" 200200 "$OUT"
expect "... the audit names the entry with its port" "connect origin.test $P1 allow allowedDomains[0] origin.test:$P1" \
	"$(aud a.audit proto host port decision rule)"
OUT=$(hr ports.yaml a.audit -- "${C[@]}" "http://origin.test:$P2/hello")
expect "origin.test on another port: refused (403)" 000403 "$OUT"
expect "... by the default, the entry names a port" "deny default deny" "$(aud a.audit decision rule)"
OUT=$(hr ports.yaml a.audit -- curl -sS --max-time 10 -o /dev/null -w '%{http_code}' \
	-x http://127.0.0.1:3128 "http://origin.test:$P2/hello")
expect "... and through absolute-form forwarding too" 403 "$OUT"
OUT=$(hr ports.yaml a.audit -- curl -sS --max-time 10 -o /dev/null -w '%{http_code}' \
	--socks5-hostname 127.0.0.1:1080 "http://origin.test:$P1/hello")
expect "... and SOCKS5 to the listed port works" 200 "$OUT"
OUT=$(hr ports.yaml a.audit -- sh -c "curl -sS --max-time 10 --socks5-hostname 127.0.0.1:1080 http://origin.test:$P2/ 2>&1; echo rc=\$?")
expect_match "... SOCKS5 to another port is refused" "rc=97" "$OUT"

LONG=$(printf 'a%.0s' {1..63}).long.test
OUT=$(hr ports.yaml a.audit -- "${C[@]}" "http://$LONG:$P2/hello")
expect "*.long.test:$P2: a subdomain on that port is reached" 200200 "$OUT"
OUT=$(hr ports.yaml a.audit -- "${C[@]}" "http://$LONG:$P1/hello")
expect "*.long.test:$P2: the same subdomain on another port is refused" 000403 "$OUT"

OUT=$(hr ports.yaml a.audit -- "${C[@]}" "http://two.test:$P1/hello")
expect "two.test allowed on every port, denied on $P1: deny wins there" 000403 "$OUT"
expect "... naming the deny entry" "deny deniedDomains[0] two.test:$P1" "$(aud a.audit decision rule)"

# check: the same answers without a sandbox.
chk() { "${WRAP[@]}" "$HALO" check --policy "$W/ports.yaml" "$1" 2>&1; }
OUT=$(chk "origin.test:$P1")
expect "check origin.test:$P1: allow, rule named" "allow origin.test:$P1|rule: allowedDomains[0] origin.test:$P1" \
	"$(printf '%s' "$OUT" | head -2 | tr '\n' '|' | sed 's/|$//')"
chk "origin.test:$P2" >/dev/null
expect "check origin.test:$P2: deny (exit 1)" 1 "$?"
chk "http://origin.test:$P1/x" >/dev/null
expect "check of a URL with the port: allow (exit 0)" 0 "$?"
chk "origin.test" >/dev/null
expect "check origin.test without a port: deny (only portless entries apply)" 1 "$?"
OUT=$(chk "two.test:$P1")
expect_match "check two.test:$P1: deny by the deny entry" "rule: deniedDomains\[0\] two.test:$P1" "$OUT"

# check --resolve (item 5): the lookup and the address rule the proxy applies.
chkr() { "${WRAP[@]}" "$HALO" check --resolve --policy "$W/$1" "$2" 2>&1; }
OUT=$(chkr nopriv.yaml origin.test)
RC=$?
expect "check --resolve: an allowed name resolving to loopback is refused (exit 1)" 1 "$RC"
expect_match "... naming the address and its class" "address 127.0.0.1: refused: loopback, not in egress.allowPrivate" "$OUT"
expect_match "... and the verdict" "resolved: deny" "$OUT"
expect_match "... while the name rule alone allows it" "^allow origin.test" "$OUT"
OUT=$(chkr main.yaml origin.test)
expect "check --resolve: covered by allowPrivate: allow (exit 0)" 0 "$?"
expect_match "... every address ok" "address 127.0.0.1: ok" "$OUT"
OUT=$(chkr nopriv.yaml meta.test)
expect_match "check --resolve: a metadata address is named" "address 169.254.169.254: refused: metadata" "$OUT"
OUT=$(chkr mixed.yaml mixed.test)
RC=$?
expect "check --resolve: one refused answer of two refuses the name (exit 1)" 1 "$RC"
expect_match "... the allowed answer is ok" "address 127.0.0.2: ok" "$OUT"
expect_match "... the other is refused" "address 127.0.0.1: refused" "$OUT"
OUT=$(chkr main.yaml denied.test)
expect_match "check --resolve: a denied name is never looked up" "not looked up" "$OUT"
printf 'egress:\n  default: deny\n  allowedDomains: [nosuch.test]\n' >"$W/nosuch.yaml"
chmod a+r "$W/nosuch.yaml"
OUT=$(chkr nosuch.yaml nosuch.test)
expect "check --resolve: a name that does not resolve: exit 1" 1 "$?"
expect_match "... said so" "nosuch.test does not resolve" "$OUT"

# Validation: the grammar's errors name the entry.
printf 'egress:\n  allowedDomains: ["a.test:0", "b.test:ssh", "[::1]x", ":22"]\n' >"$W/badports.yaml"
OUT=$("$HALO" validate "$W/badports.yaml" 2>&1)
expect "validate refuses bad ports (exit 1)" 1 "$?"
for m in "'a.test:0': port 0 out of range" "'b.test:ssh': port 'ssh' is not a decimal number" \
	"only ':PORT' may follow \[v6\]" "a port with no host"; do
	expect_match "... naming: $m" "$m" "$OUT"
done
finish
