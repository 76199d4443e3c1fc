#!/bin/sh
# Build halo-run's Debian package with dpkg-deb (no debhelper needed): `make deb`.
#   tools/mkdeb.sh BUILD VERSION "LINKS"
# The tree is `make install DESTDIR=... PREFIX=/usr` (binary, links, the man pages
# halo-run(1) and halo-run-policy(5) made from the docs), plus the README and docs/, copyright, changelog, the AppArmor profile and the proxy's systemd units
# (see packaging/). The
# Depends line comes from dpkg-shlibdeps when it is there, else from ldd and dpkg -S,
# plus the libraries in $DEB_DLOPEN (loaded with dlopen: neither tool sees them).
# Prints the path of the .deb.
set -eu

BUILD=$1 VERSION=$2 LINKS=$3
MAINTAINER=${DEB_MAINTAINER:-halo-run maintainers <maintainers@users.noreply.a-seed-bf3eb895.example>}
ARCH=$(dpkg --print-architecture)
TOP=$(pwd)
STAGE=$TOP/$BUILD/deb
ROOT=$STAGE/root
DEB=$TOP/$BUILD/halo-run_${VERSION}_${ARCH}.deb

rm -rf "$STAGE"
mkdir -p "$ROOT/DEBIAN"
make -s install DESTDIR="$ROOT" PREFIX=/usr BUILD="$BUILD" HALO_LINKS="$LINKS" >/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$ROOT/usr/bin/halo-run"

doc=$ROOT/usr/share/doc/halo-run
install -d "$doc" "$ROOT/usr/share/halo-run/apparmor"
install -m 0644 README.md "$doc/README.md"
install -d "$doc/docs" # the README's links, relative: docs/NAME.md
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 packaging/deb/copyright "$doc/copyright"
install -m 0644 packaging/apparmor/halo-run "$ROOT/usr/share/halo-run/apparmor/halo-run"
# halo-run proxy as a service: shipped, never enabled by the package (README,
# "halo-run proxy: recipes").
install -d "$ROOT/usr/lib/systemd/system"
install -m 0644 packaging/systemd/halo-run-proxy.service packaging/systemd/halo-run-proxy.socket \
	packaging/systemd/halo-run-proxy-socks.socket "$ROOT/usr/lib/systemd/system/"
install -d "$ROOT/usr/share/lintian/overrides"
install -m 0644 packaging/deb/lintian-overrides "$ROOT/usr/share/lintian/overrides/halo-run"
date=$(date -u -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
printf 'halo-run (%s) unstable; urgency=medium\n\n  * Built from the halo-run source tree (%s).\n\n -- %s  %s\n' \
	"$VERSION" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$MAINTAINER" "$date" |
	gzip -9n >"$doc/changelog.gz"
gzip -9n "$ROOT/usr/share/man/man1/halo-run.1" "$ROOT/usr/share/man/man5/halo-run-policy.5"
for l in $LINKS; do ln -sf halo-run.1.gz "$ROOT/usr/share/man/man1/$l.1.gz"; done

# Depends: what the dynamic linker needs, as the packages that ship it.
depends=
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
	mkdir -p "$STAGE/src/debian"
	printf 'Source: halo-run\n\nPackage: halo-run\nArchitecture: any\n' >"$STAGE/src/debian/control"
	depends=$(cd "$STAGE/src" && dpkg-shlibdeps -O "$ROOT/usr/bin/halo-run" 2>/dev/null |
		sed -n 's/^shlibs:Depends=//p')
fi
if [ -z "$depends" ]; then
	depends=$(ldd "$ROOT/usr/bin/halo-run" | awk '$3 ~ /^\// {print $3}' |
		while read -r lib; do dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib"; done |
		cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
fi
[ -n "$depends" ] || { echo "mkdeb: could not work out Depends" >&2; exit 1; }
# ... and what halo-run loads itself on first use ($DEB_DLOPEN: the paths of the
# libraries, from the Makefile; OpenSSL where the binary does not link it): as the
# package that ships each, with the version its shlibs file asks for.
for lib in ${DEB_DLOPEN:-}; do
	pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1)
	[ -n "$pkg" ] || { echo "mkdeb: no package ships $lib" >&2; exit 1; }
	so=$(basename "$lib") # libssl.so.3 -> "libssl 3" in shlibs
	dep=$(awk -v n="${so%%.so.*}" -v v="${so##*.so.}" '$1 == n && $2 == v {
		$1 = $2 = ""; sub(/^ +/, ""); print; exit }' \
		"$(dpkg-query --control-path "$pkg" shlibs 2>/dev/null)" 2>/dev/null)
	depends="$depends, ${dep:-$pkg}"
done

size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@MAINTAINER@|$MAINTAINER|" \
	-e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$depends|" packaging/deb/control.in >"$ROOT/DEBIAN/control"
install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$ROOT/DEBIAN/"
(cd "$ROOT" && find usr -type f -exec md5sum {} + | sort -k2) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +

dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
echo "$DEB"
