#!/bin/bash
# halo-run proxy's systemd units (packaging/systemd, issue 26 item 4): systemd's own
# checker finds nothing to say about them (and does flag a broken copy, so its silence
# means something), their hardening scores as systemd rates it, the listeners are the
# loopback and a 0600 unix socket only, SOCKS5 is told by the socket's name the way
# `halo-run proxy` reads LISTEN_FDNAMES, the package ships them and enables nothing.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
SRC="$IT/../src"
U="$SRC/packaging/systemd"
if [ ! -r "$U/halo-run-proxy.service" ]; then
	fail "units staged" "$U/halo-run-proxy.service missing (run.sh copies packaging/)"
	finish
	exit
fi
UNITS="halo-run-proxy.service halo-run-proxy.socket halo-run-proxy-socks.socket"

# ------------------------------------------------------- systemd-analyze verify
# verify insists that ExecStart's program exists: the copies run this build's binary
# in place of /usr/bin/halo-run, nothing else changed.
mkdir -p units bad
for f in $UNITS; do sed "s|/usr/bin/halo-run|$HALO|" "$U/$f" >"units/$f"; done
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze verify: the units" "no systemd-analyze (apt-get install systemd)"
else
	OUT=$(cd units && timeout -k 2 60 systemd-analyze verify --man=no $(printf './%s ' $UNITS) 2>&1)
	expect "systemd-analyze verify: nothing to say about the three units" "" "$OUT"
	cp units/* bad/
	sed -i 's/^ProtectSystem=strict/ProtectSystm=strict/; s/^RestrictAddressFamilies=.*/RestrictAddressFamilies=AF_BOGUS/' \
		bad/halo-run-proxy.service
	OUT=$(cd bad && timeout -k 2 60 systemd-analyze verify --man=no ./halo-run-proxy.service 2>&1)
	expect_match "systemd-analyze verify flags a broken copy (a misspelt key)" "Unknown key 'ProtectSystm'" "$OUT"
	expect_match "systemd-analyze verify flags a broken copy (an unknown family)" "AF_BOGUS" "$OUT"
	OUT=$(cd units && timeout -k 2 60 systemd-analyze security --offline=yes ./halo-run-proxy.service 2>&1)
	lvl=$(sed -n 's/.*Overall exposure level for halo-run-proxy.service: \([0-9.]*\).*/\1/p' <<<"$OUT")
	if [ -z "$lvl" ]; then
		skip "systemd-analyze security: exposure" "no offline rating here: $(tail -1 <<<"$OUT")"
	else
		echo "# systemd-analyze security --offline=yes: exposure $lvl (0 best, 10 worst)"
		expect "the service's exposure is at most 2.0 (systemd's 'OK')" yes \
			"$(awk -v l="$lvl" 'BEGIN {print (l <= 2.0) ? "yes" : "no"}')"
	fi
fi

# ------------------------------------------------------------- what they say
svc=$(cat "$U/halo-run-proxy.service") sock=$(cat "$U/halo-run-proxy.socket")
socks=$(cat "$U/halo-run-proxy-socks.socket")
expect_match "ExecStart runs halo-run proxy with the policy in /etc/halo-run" \
	'^ExecStart=/usr/bin/halo-run proxy --policy /etc/halo-run/proxy.yaml( |$)' "$svc"
expect_match "reload is SIGHUP" '^ExecReload=/bin/kill -HUP \$MAINPID$' "$svc"
for d in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes ProtectHome=yes \
	'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' CapabilityBoundingSet= RestrictNamespaces=yes \
	'SystemCallFilter=@system-service'; do
	expect "service: $d" yes "$(grep -qxF -- "$d" <<<"$svc" && echo yes)"
done
listens=$(grep -h '^ListenStream=' "$U"/*.socket | cut -d= -f2-)
expect "listeners: loopback and /run/halo-run/proxy.sock only" \
	"127.0.0.1:3128 /run/halo-run/proxy.sock 127.0.0.1:1080" "$(
		grep -h '^ListenStream=' "$U/halo-run-proxy.socket" "$U/halo-run-proxy-socks.socket" | cut -d= -f2- | paste -sd' '
	)"
nonlocal=""
for l in $listens; do
	case $l in 127.* | '[::1]':* | /run/*) ;; *) nonlocal+=" $l" ;; esac
done
expect "no listener beyond the loopback and a unix socket" "" "$nonlocal"
expect "the unix socket is 0600" yes "$(grep -qx 'SocketMode=0600' <<<"$sock" && echo yes)"
expect "the HTTP socket is named http (not socks)" yes "$(grep -qx 'FileDescriptorName=http' <<<"$sock" && echo yes)"
expect "the SOCKS5 socket is named socks (LISTEN_FDNAMES)" yes \
	"$(grep -qx 'FileDescriptorName=socks' <<<"$socks" && echo yes)"
expect "both sockets activate the service" "2" \
	"$(grep -lx 'Service=halo-run-proxy.service' "$U/halo-run-proxy.socket" "$U/halo-run-proxy-socks.socket" | wc -l)"

# ------------------------------------------------------------------ the package
expect "postinst enables and starts nothing" "" \
	"$(grep -nE 'systemctl|deb-systemd|halo-run-proxy' "$SRC/packaging/deb/postinst")"
expect "mkdeb.sh installs the three units" 3 \
	"$(grep -oE 'packaging/systemd/halo-run-proxy[a-z-]*\.(service|socket)' "$SRC/tools/mkdeb.sh" | sort -u | wc -l)"
DEB=$(ls -t "$SRC"/halo-run_*.deb 2>/dev/null | head -1)
if [ -z "$DEB" ] || ! command -v dpkg-deb >/dev/null; then
	skip "dpkg-deb -c lists the units" "no package built (make deb) or no dpkg-deb"
elif [ "$DEB" -ot "$U/halo-run-proxy.service" ] || [ "$DEB" -ot "$SRC/tools/mkdeb.sh" ]; then
	skip "dpkg-deb -c lists the units" "the package is older than the units (make deb)"
else
	list=$(dpkg-deb -c "$DEB")
	miss=""
	for f in $UNITS; do
		grep -qE "^-rw-r--r-- root/root .* \./usr/lib/systemd/system/$f\$" <<<"$list" || miss+=" $f"
	done
	expect "dpkg-deb -c: the units in /usr/lib/systemd/system, 0644 root" "" "$miss"
	expect "the package enables nothing (no .wants link)" "" "$(grep -E '\.wants/' <<<"$list")"
fi
finish
