#!/bin/bash
# egress.upstreamProxy (issue 13, item 4) through the real sandbox: tinyproxy on
# loopback is the company's proxy, with Basic auth and its own access log. Allowed
# names reach the origin through it (CONNECT name:port in its log, for CONNECT,
# absolute-form and SOCKS5 clients alike); a denied name and a name whose answer is
# a refused private address never appear in its log; no or wrong credentials (407),
# an upstream that is down: 502 naming the upstream and its answer; `env` takes the
# caller's https_proxy (userinfo included) and NO_PROXY, and none of it is visible
# inside the sandbox; check and --dry-run say the route.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"

# The upstream on this host, by any name, with its port in hostPorts: the host-port
# relay would hand the command the upstream itself. Refused at launch (125), whatever
# spells it: localhost, localhost., 0.0.0.0, a test name for 127.0.0.2, the host's own
# interface address, the caller's proxy variables for `env`. Nothing is dialled: the
# addresses are compared, never probed, and no upstream needs to run for these rows.
UP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "10.0.0.7 farproxy.test" >>"$W/etc/hosts" # never dialled: the command is sh -c
hp_policy() { # FILE UPSTREAM: deny by default, hostPorts on $UP
	printf 'egress:\n  default: deny\n  allowedDomains: [origin.test]\n  hostPorts: [%s]\n  upstreamProxy: %s\n' \
		"$UP" "$2" >"$W/$1"
	chmod a+r "$W/$1"
}
one_line() { tr '\n' ' ' <<<"$1" | sed 's/ $//'; }
OWN=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v -e '^$' -e '^fe80' | head -1)
for row in "localhost|http://localhost:$UP" "localhost.|http://localhost.:$UP" \
	"0.0.0.0|http://0.0.0.0:$UP" "[::]|http://[::]:$UP" "a name for 127.0.0.2|http://two.test:$UP" \
	"[::1]|http://[::1]:$UP" "own address|"; do
	name=${row%%|*} url=${row#*|}
	if [ "$name" = "own address" ]; then
		if [ -z "$OWN" ]; then
			skip "hostPorts on the upstream's port, upstream $name" "this host lists no interface address"
			continue
		fi
		case $OWN in *:*) url="http://[$OWN]:$UP" ;; *) url="http://$OWN:$UP" ;; esac
	fi
	hp_policy hpl.yaml "$url"
	OUT=$(hr hpl.yaml a.audit -- sh -c 'echo ran'; echo "rc=$?")
	expect "hostPorts on the upstream's port, upstream $name: 125, nothing ran" "rc=125" "$OUT"
	expect_match "... names the hostPorts entry and says why" \
		"egress.hostPorts\[0\] $UP is egress.upstreamProxy's port, and the upstream .* is this host" "$(cat "$W/err")"
done
hp_policy hpenv.yaml env
for var in https_proxy HTTPS_PROXY http_proxy HTTP_PROXY; do
	for host in localhost 0.0.0.0; do
		OUT=$(
			export "$var=http://$host:$UP"
			hr hpenv.yaml a.audit -- sh -c 'echo ran'
			echo "rc=$?"
		)
		expect "env: the caller's $var=http://$host:$UP, hostPorts on its port: 125" "rc=125" "$OUT"
		expect_match "... names the variable" "egress.hostPorts\[0\] $UP is $var's port" "$(cat "$W/err")"
	done
done
hp_policy hpfar.yaml "http://farproxy.test:$UP"
OUT=$(hr hpfar.yaml a.audit -- sh -c 'echo ran'; echo "rc=$?")
expect "an upstream elsewhere (10.0.0.7), hostPorts on its port: it launches" "ran rc=0" "$(one_line "$OUT")"
hp_policy hpnx.yaml "http://nosuch.test:$UP"
OUT=$(hr hpnx.yaml a.audit -- sh -c 'echo ran'; echo "rc=$?")
expect "an upstream name that does not resolve, hostPorts on its port: 125" "rc=125" "$OUT"
expect_match "... says it cannot be looked up" "egress.upstreamProxy nosuch.test: cannot be looked up" "$(cat "$W/err")"
hp_policy hpother.yaml "http://localhost:$UP"
sed -i "s/hostPorts: \[$UP\]/hostPorts: [$((UP == 65535 ? UP - 1 : UP + 1))]/" "$W/hpother.yaml"
OUT=$(hr hpother.yaml a.audit -- sh -c 'echo ran'; echo "rc=$?")
expect "hostPorts on another port than the local upstream's: it launches" "ran rc=0" "$(one_line "$OUT")"
# An allowed target that is this host on the upstream's port, dialled because
# allowPrivate covers it: the same way through, whatever the upstream's own spelling.
printf 'egress:\n  default: deny\n  allowedDomains: ["127.0.0.1"]\n  allowPrivate: [127.0.0.1/32]\n  upstreamProxy: http://0.0.0.0:%s\n' "$UP" >"$W/hptarget.yaml"
chmod a+r "$W/hptarget.yaml"
OUT=$(hr hptarget.yaml a.audit -- sh -c 'echo ran'; echo "rc=$?")
expect "upstream 0.0.0.0, 127.0.0.1 an allowed target that allowPrivate covers: 125" "rc=125" "$OUT"
expect_match "... names the target and the rule" "127.0.0.1:$UP is an allowed target \(allowedDomains\[0\] 127.0.0.1\)" "$(cat "$W/err")"

if ! command -v tinyproxy >/dev/null; then
	skip "upstream proxy rows" "tinyproxy is not installed (make deps-bench)"
	finish
	exit
fi
start_origin o1 echo 127.0.0.1
O1=$(wait_port o1)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
TP=$(free_port) DOWN=$(free_port)
cat >"$W/tp.conf" <<EOF
Port $TP
Listen 127.0.0.1
Timeout 60
MaxClients 50
Allow 127.0.0.1
LogLevel Connect
LogFile "$W/tp.log"
PidFile "$W/tp.pid"
BasicAuth alice s3cret
EOF
# Under the test names too: the upstream resolves origin.test itself.
timeout 280 "${WRAP[@]}" tinyproxy -d -c "$W/tp.conf" >"$W/tp.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$TP") 2>/dev/null && break
	sleep 0.1
done
tplog() { grep -c "CONNECT $1" "$W/tp.log" 2>/dev/null; } # tinyproxy's CONNECT lines for $1

cat >"$W/up.yaml" <<EOF
egress:
  default: deny
  allowedDomains: [origin.test, two.test]
  deniedDomains: [denied.test]
  allowPrivate: [127.0.0.1/32]
  upstreamProxy: http://127.0.0.1:$TP
EOF
sed "s/upstreamProxy: .*/upstreamProxy: env/" "$W/up.yaml" >"$W/env.yaml"
sed "s/upstreamProxy: .*/upstreamProxy: http:\/\/127.0.0.1:$DOWN/" "$W/up.yaml" >"$W/down.yaml"
chmod a+r "$W"/*.yaml
C=(curl -s --max-time 10 -o /dev/null -w '%{http_code}%{http_connect}')
export HALO_UPSTREAM_PROXY_AUTH=alice:s3cret

OUT=$(hr up.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "CONNECT client: the origin is reached through the upstream" 200200 "$OUT"
expect "... tinyproxy's log has CONNECT origin.test:$O1 (the name, not an address)" 1 "$(tplog "origin.test:$O1")"
expect "... the audit names the upstream and the checked address" \
	"connect origin.test allow 127.0.0.1 127.0.0.1:$TP" "$(aud a.audit proto host decision address upstream)"
OUT=$(hr up.yaml a.audit -- curl -s --max-time 10 -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "absolute-form client: forwarded through a tunnel of the upstream" "hello from 127.0.0.1" "$OUT"
expect "... tinyproxy saw a second CONNECT" 2 "$(tplog "origin.test:$O1")"
OUT=$(hr up.yaml a.audit -- curl -s --max-time 10 --socks5-hostname 127.0.0.1:1080 "http://origin.test:$O1/hello")
expect "SOCKS5 client: through the upstream too" "hello from 127.0.0.1" "$OUT"
expect "... a third CONNECT" 3 "$(tplog "origin.test:$O1")"

OUT=$(hr up.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://denied.test:$O1/hello")
expect "a denied name: 403 from halo-run" 000403 "$OUT"
expect "... and never sent to the upstream" 0 "$(grep -c denied.test "$W/tp.log")"
OUT=$(hr up.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://two.test:$O1/hello")
expect "an allowed name resolving to a refused private address: 403 before forwarding" 000403 "$OUT"
expect "... the rule names the address" "deny address 127.0.0.2 is loopback, not in allowPrivate" \
	"$(aud a.audit decision rule)"
expect "... and the upstream never saw it" 0 "$(grep -c two.test "$W/tp.log")"

OUT=$(HALO_UPSTREAM_PROXY_AUTH= hr up.yaml a.audit -- curl -s --max-time 10 -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "no credentials: 502 naming the upstream and its 407" \
	"halo-run proxy: origin.test:$O1: upstream proxy 127.0.0.1:$TP answered 407 (Proxy Authentication Required)" "$OUT"
OUT=$(HALO_UPSTREAM_PROXY_AUTH=alice:wrong hr up.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "wrong credentials: 502 to the CONNECT client" 000502 "$OUT"
expect_match "... the audit says why (tinyproxy answers 401 to wrong ones)" \
	"^upstream proxy 127.0.0.1:$TP answered 40[17] " "$(aud a.audit error)"
OUT=$(hr down.yaml a.audit -- curl -s --max-time 10 -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "an upstream that is down: 502 naming it" \
	"halo-run proxy: origin.test:$O1: upstream proxy 127.0.0.1:$DOWN: connection refused" "$OUT"

# env: the caller's https_proxy with userinfo; nothing of it inside.
unset HALO_UPSTREAM_PROXY_AUTH
N=$(tplog "origin.test:$O1")
OUT=$(https_proxy="http://alice:s3cret@127.0.0.1:$TP" HTTPS_PROXY= NO_PROXY= no_proxy= hr env.yaml a.audit -- sh -c \
	"curl -s --max-time 10 -x http://127.0.0.1:3128 http://origin.test:$O1/hello; env | grep -c -e s3cret -e $TP")
expect "env: the caller's https_proxy (credentials in its userinfo) is the upstream; nothing of it inside" \
	"hello from 127.0.0.1|0" "$(printf '%s' "$OUT" | tr '\n' '|')"
expect "... tinyproxy saw it" $((N + 1)) "$(tplog "origin.test:$O1")"
OUT=$(https_proxy="http://alice:s3cret@127.0.0.1:$TP" NO_PROXY=.test hr env.yaml a.audit -- \
	curl -s --max-time 10 -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "env: a NO_PROXY name is dialled directly" "hello from 127.0.0.1" "$OUT"
expect "... not through the upstream" "$((N + 1)) -" "$(tplog "origin.test:$O1") $(aud a.audit upstream)"
# ALL_PROXY, as curl reads it: the upstream when no protocol's own variable is set.
N=$(tplog "origin.test:$O1")
OUT=$(ALL_PROXY="http://alice:s3cret@127.0.0.1:$TP" https_proxy= HTTPS_PROXY= http_proxy= HTTP_PROXY= NO_PROXY= no_proxy= \
	hr env.yaml a.audit -- curl -s --max-time 10 -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "env: ALL_PROXY alone is the upstream" "hello from 127.0.0.1" "$OUT"
expect "... tinyproxy saw it" $((N + 1)) "$(tplog "origin.test:$O1")"
OUT=$(all_proxy="socks5://127.0.0.1:$TP" https_proxy= HTTPS_PROXY= http_proxy= HTTP_PROXY= hr env.yaml a.audit -- true; echo "rc=$?")
expect "env: a socks5:// all_proxy refuses the launch (125)" "rc=125" "$OUT"
expect_match "... naming the variable" "all_proxy: a SOCKS upstream is not supported" "$(cat "$W/err")"
OUT=$(HALO_UPSTREAM_PROXY_AUTH=alice:s3cret hr env.yaml a.audit -- env 2>&1)
expect "HALO_UPSTREAM_PROXY_AUTH is never passed into the sandbox" 0 "$(grep -c -e HALO_UPSTREAM -e s3cret <<<"$OUT")"
OUT=$(https_proxy="https://127.0.0.1:$TP" hr env.yaml a.audit -- true; echo "rc=$?")
expect "env: an https:// upstream refuses the launch (125) naming the variable" "rc=125" "$OUT"
expect_match "... with the reason" "https_proxy: an upstream reached over TLS" "$(cat "$W/err")"

# An allowed name that resolves to the upstream (here origin.test, 127.0.0.1, which
# allowPrivate covers) on the upstream's port: a tunnel to it is the upstream itself,
# a proxy behind halo-run's that decides nothing. Refused (403) before anything is
# sent, through the upstream or (NO_PROXY) directly.
N=$(grep -c "CONNECT origin.test:$TP" "$W/tp.log" 2>/dev/null)
OUT=$(hr up.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://origin.test:$TP/")
expect "a name resolving to the upstream, on its port: 403" 000403 "$OUT"
expect_match "... the rule names the upstream" "deny address 127.0.0.1 port $TP is the upstream proxy" "$(aud a.audit decision rule)"
expect "... and the upstream never saw it" "$N" "$(grep -c "CONNECT origin.test:$TP" "$W/tp.log" 2>/dev/null)"
OUT=$(https_proxy="http://127.0.0.1:$TP" NO_PROXY=origin.test hr env.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://origin.test:$TP/")
expect "... dialled directly (NO_PROXY): 403 too" 000403 "$OUT"
OUT=$(HALO_UPSTREAM_PROXY_AUTH=alice:s3cret hr up.yaml a.audit -- "${C[@]}" -p -x http://127.0.0.1:3128 "http://origin.test:$O1/hello")
expect "... another port of the same address still goes through" 200200 "$OUT"

# check and --dry-run show the route.
OUT=$("$HALO" check --policy "$W/up.yaml" "origin.test:443" 2>&1)
expect_match "check shows the upstream" "^route: through the upstream proxy http://127.0.0.1:$TP \(from egress.upstreamProxy" "$OUT"
OUT=$(https_proxy="http://127.0.0.1:$TP" NO_PROXY=origin.test "$HALO" check --policy "$W/env.yaml" "origin.test:443" 2>&1)
expect_match "check: a NO_PROXY name goes direct" "^route: direct \(the caller's NO_PROXY names it" "$OUT"
OUT=$(cd "$WS" && "$HALO" --dry-run --policy "$W/up.yaml" -- true 2>&1)
expect_match "--dry-run shows the upstream" "through the upstream proxy http://127.0.0.1:$TP" "$OUT"

# The upstream itself allowed as a target (here by default allow; in life often by
# "*.corp.example" with allowPrivate, its NO_PROXY naming the same domain): a tunnel to
# it would be a proxy to every host it serves, none decided. The launch is refused.
sed -e "s/default: deny/default: allow/" -e "/allowedDomains/d" "$W/up.yaml" >"$W/self.yaml"
chmod a+r "$W/self.yaml"
OUT=$(hr self.yaml a.audit -- true; echo "rc=$?")
expect "an upstream that the policy allows as a target refuses the launch (125)" "rc=125" "$OUT"
expect_match "... naming it" "egress.upstreamProxy 127.0.0.1:$TP is itself allowed \(default allow\)" "$(cat "$W/err")"
sed "/allowPrivate/d" "$W/self.yaml" >"$W/selfpriv.yaml"
chmod a+r "$W/selfpriv.yaml"
OUT=$(hr selfpriv.yaml a.audit -- true; echo "rc=$?")
expect "... unless the address rule refuses it anyway (loopback, no allowPrivate): it launches" "rc=0" "$OUT"
printf '  hostPorts: [%s]\n' "$TP" | cat "$W/up.yaml" - >"$W/hp.yaml"
chmod a+r "$W/hp.yaml"
OUT=$(hr hp.yaml a.audit -- true; echo "rc=$?")
expect "hostPorts forwarding the upstream's loopback port refuses the launch (125)" "rc=125" "$OUT"
expect_match "... naming it" "egress.hostPorts\[0\] $TP is egress.upstreamProxy's port" "$(cat "$W/err")"
printf '  deniedDomains: [denied.test, "127.0.0.1:%s"]\n' "$TP" >>"$W/self.yaml"
sed -i "/deniedDomains: \[denied.test\]$/d" "$W/self.yaml"
OUT=$(hr self.yaml a.audit -- true; echo "rc=$?")
expect "... and denied, it launches" "rc=0" "$OUT"
finish
