#!/bin/bash
# The Debian package, end to end (`make check-deb`; not part of `make check`: the first
# run debootstraps Debian 12 from the Debian archive, minutes):
#   1. lintian: no error or warning (the overrides in packaging/deb are the only ones);
#   2. a clean bookworm minbase root (a fresh copy of a cached debootstrap), where
#      `apt-get install ./halo-run_*.deb` is the one install step (it fetches libcjson1);
#   3. inside that root, entered by pivot_root in a private mount namespace (a chroot
#      would refuse every unprivileged user namespace), `halo-run verify` passes as
#      root and as an unprivileged user, halo-sh runs, the man page is there, and the
#      AppArmor profile is where the package keeps it (copied into /etc/apparmor.d
#      only where the parser knows abi 4.0, which bookworm's does not);
#   4. apt-get purge leaves no file behind; halo-run proxy's units are shipped and
#      none is enabled.
# Needs root. Usage: tests/pkg/t_deb.sh BUILD_DIR (with BUILD_DIR/halo-run_*.deb).
set -u
BUILD=${1:?usage: t_deb.sh BUILD_DIR}
CACHE=${HALO_PKG_CACHE:-/var/tmp/halo-pkg-bookworm} # the pristine debootstrap
MIRROR=${HALO_PKG_MIRROR:-http://deb.debian.org/debian}
pass=0 failed=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
fail() { echo "FAIL: $1${2:+: $2}"; failed=$((failed + 1)); }
check() { # NAME CMD...: ok when CMD succeeds
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else fail "$name" "$(tail -15 <<<"$out")"; fi
}

[ "$(id -u)" = 0 ] || { echo "skip: t_deb.sh needs root (debootstrap, pivot_root)"; exit 0; }
DEB=$(ls "$BUILD"/halo-run_*.deb 2>/dev/null | tail -1)
[ -n "$DEB" ] || { echo "FAIL: no package in $BUILD (make deb)"; exit 1; }

# ---------------------------------------------------------------- 1. lintian
if command -v lintian >/dev/null; then
	out=$(lintian --tag-display-limit 0 "$DEB" 2>&1 | grep -v 'root privileges')
	if grep -q '^[EW]:' <<<"$out"; then fail "lintian: no error or warning" "$out"; else ok "lintian: no error or warning${out:+ (info: $(grep -c '^I:' <<<"$out"))}"; fi
else
	echo "skip: lintian not installed (apt-get install lintian)"
fi
check "dpkg-deb: halo-run, halo-sh, man pages, profile, README, docs/" sh -c \
	"dpkg-deb -c '$DEB' | grep -q ' ./usr/bin/halo-run\$' && dpkg-deb -c '$DEB' | grep -q './usr/bin/halo-sh -> halo-run' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/share/man/man1/halo-run.1.gz' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/share/man/man5/halo-run-policy.5.gz' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/share/doc/halo-run/docs/policy.md' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/share/halo-run/apparmor/halo-run' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/share/doc/halo-run/README.md'"
check "dpkg-deb: halo-run proxy's systemd units, no enable link" sh -c \
	"dpkg-deb -c '$DEB' | grep -q './usr/lib/systemd/system/halo-run-proxy.service\$' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/lib/systemd/system/halo-run-proxy.socket\$' &&
	 dpkg-deb -c '$DEB' | grep -q './usr/lib/systemd/system/halo-run-proxy-socks.socket\$' &&
	 ! dpkg-deb -c '$DEB' | grep -q '\.wants/'"

# ---------------------------------------------------------------- 2. a clean root
if [ ! -x "$CACHE/usr/bin/apt-get" ]; then
	command -v debootstrap >/dev/null || { echo "FAIL: debootstrap missing (apt-get install debootstrap)"; exit 1; }
	avail=$(df -Pk "$(dirname "$CACHE")" | awk 'NR == 2 {print $4}')
	[ "$avail" -gt 1048576 ] || { echo "FAIL: under 1 GiB free for the Debian root"; exit 1; }
	rm -rf "$CACHE.part"
	timeout 1500 debootstrap --variant=minbase bookworm "$CACHE.part" "$MIRROR" >"$CACHE.log" 2>&1 ||
		{ echo "FAIL: debootstrap (see $CACHE.log)"; tail -5 "$CACHE.log"; exit 1; }
	mv "$CACHE.part" "$CACHE"
fi
R=$(mktemp -d /var/tmp/halo-pkg-root.XXXXXX) || exit 1
trap 'rm -rf "$R"' EXIT
cp -a "$CACHE/." "$R/"
cp "$DEB" "$R/tmp/"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null

# What runs inside the root, after pivot_root: every line a test, "ok:" or "FAIL:".
cat >"$R/inner.sh" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C DEBIAN_FRONTEND=noninteractive
t() { name=$1; shift; if out=$("$@" 2>&1); then echo "ok: $name"; else echo "FAIL: $name: $(echo "$out" | tail -15)"; fi; }
deb=$(ls /tmp/halo-run_*.deb)
t "apt-get update" apt-get update -qq
t "apt-get install ./$(basename "$deb")" sh -c "cd /tmp && apt-get install -y -qq --no-install-recommends ./$(basename "$deb")"
t "halo-run --version" sh -c 'halo-run --version | grep -q "^halo-run "'
t "man pages installed" test -s /usr/share/man/man1/halo-run.1.gz -a -s /usr/share/man/man5/halo-run-policy.5.gz
t "AppArmor profile kept in /usr/share, not copied without abi 4.0" sh -c \
	'test -s /usr/share/halo-run/apparmor/halo-run && { test -e /etc/apparmor.d/abi/4.0 || ! test -e /etc/apparmor.d/halo-run; }'
useradd -m -u 4321 halo >/dev/null 2>&1
mkdir -p /root/ws && cd /root/ws
t "verify as root" sh -c 'halo-run verify >/tmp/verify-root.out 2>&1; rc=$?; tail -3 /tmp/verify-root.out; [ $rc = 0 ] && grep -q "^verify: [0-9]* passed, 0 failed" /tmp/verify-root.out'
echo "# root: $(grep '^verify: ' /tmp/verify-root.out)"
t "verify as an unprivileged user (uid 4321)" setpriv --reuid=4321 --regid=4321 --init-groups env HOME=/home/halo USER=halo \
	sh -c 'cd /home/halo && halo-run verify >/tmp/verify-user.out 2>&1; rc=$?; tail -3 /tmp/verify-user.out; [ $rc = 0 ] && grep -q "^verify: [0-9]* passed, 0 failed" /tmp/verify-user.out'
echo "# uid 4321: $(grep '^verify: ' /tmp/verify-user.out)"
t "halo-ci.sh installed" test -x /usr/share/halo-run/halo-ci.sh
t "proxy units installed, none enabled" sh -c \
	'test -s /usr/lib/systemd/system/halo-run-proxy.service && test -s /usr/lib/systemd/system/halo-run-proxy.socket &&
	 ! ls /etc/systemd/system/*.wants/halo-run-proxy* 2>/dev/null | grep -q .'
t "halo-sh as the user" setpriv --reuid=4321 --regid=4321 --init-groups env HOME=/home/halo \
	sh -c 'cd /home/halo && [ "$(halo-sh -c "echo in-sandbox")" = in-sandbox ]'
t "report of an empty audit" sh -c ': >/tmp/e.jsonl && halo-run report /tmp/e.jsonl --format json | grep -q "\"records\":"'
t "apt-get purge" apt-get purge -y -qq halo-run
t "purge: nothing left" sh -c '! ls /usr/bin/halo-run /usr/bin/halo-sh /usr/share/halo-run /etc/apparmor.d/halo-run /usr/lib/systemd/system/halo-run-proxy* 2>/dev/null | grep -q .'
EOF
chmod 0755 "$R/inner.sh"

# ---------------------------------------------------------------- 3. inside
out=$(timeout 900 unshare --mount --propagation private sh -c '
	R=$1
	mount --bind "$R" "$R" && mount -t proc proc "$R/proc" && mount --rbind /dev "$R/dev" &&
		mount --rbind /sys "$R/sys" && mount -t tmpfs -o mode=1777 tmpfs "$R/run" || exit 125
	mkdir -p "$R/tmp" && chmod 1777 "$R/tmp"
	cd "$R" && mkdir -p .oldroot && pivot_root . .oldroot && cd / && umount -l /.oldroot && rmdir /.oldroot || exit 125
	exec /inner.sh' sh "$R" 2>&1)
rc=$?
echo "$out" | grep -v '^ok: \|^FAIL: ' | sed 's/^/  | /'
pass=$((pass + $(grep -c '^ok: ' <<<"$out")))
failed=$((failed + $(grep -c '^FAIL: ' <<<"$out")))
grep '^ok: \|^FAIL: ' <<<"$out"
[ "$rc" = 0 ] || fail "the clean root ran to its end (rc $rc)"

echo "t_deb: $pass passed, $failed failed"
[ "$failed" = 0 ]
