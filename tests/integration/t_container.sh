#!/bin/bash
# At home in containers (issue 25, item 5): halo-run in a root file system as a
# container or a CI runner has it (tests/container/root.sh: `/` an overlay over the real
# root, /var/tmp an overlay, /tmp a fresh tmpfs, no systemd), as root and as uid 65534
# inside it: workspaces on the overlay and on the tmpfs get their secrets masked, their
# writes kept, writes elsewhere refused, hard links to a masked file refused; the index
# is kept only where the file system keeps directory ctimes itself (tmpfs, not
# overlayfs). The layout lives in a private mount namespace: the host never changes.
set -u
. "$IT/lib.sh"

# ---------------------------------------------------------------- inside the layout
rows() { # WHO (root|user): the rows, run inside the container's root
	local who=$1 base pfx W E=/tmp/ct-err-$1 H=/tmp/ct-home-$1 OUT RC
	local -a as=()
	mkdir -p "$H"
	if [ "$who" = user ]; then
		chown 65534:65534 "$H"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
	sbx() { # DIR ARGS...: halo-run in DIR as $who; sets OUT RC
		local d=$1
		shift
		OUT=$(cd "$d" && timeout -k 2 60 "${as[@]}" env HOME="$H" PATH=/usr/bin:/bin \
			"$HALO" "$@" 2>"$E" </dev/null)
		RC=$?
	}
	for base in /var/tmp /tmp; do
		pfx="$who, workspace on $(stat -f -c %T "$base")"
		W=$(mktemp -d "$base/ct-ws.XXXXXX")
		mkdir -p "$W/src/deep"
		printf 'TOKEN=s3cret\n' >"$W/src/deep/.env"
		echo code >"$W/src/main.c"
		[ "$who" = user ] && chown -R 65534:65534 "$W"
		sbx "$W" -- sh -c 'cat src/deep/.env 2>/dev/null; cat src/main.c; echo out >made; echo x >/etc/halo-ct 2>/dev/null || echo refused'
		expect "$pfx: .env masked, the code read, a write outside refused" "0:code|refused|" "$RC:$(tr '\n' '|' <<<"$OUT")"
		expect "$pfx: the write in the workspace kept" out "$(cat "$W/made" 2>/dev/null)"
		expect "$pfx: nothing written to /etc" no "$([ -e /etc/halo-ct ] && echo yes || echo no)"
		ln "$W/src/deep/.env" "$W/env-link"
		sbx "$W" -- sh -c 'cat env-link; echo ran'
		expect "$pfx: a hard link to a masked .env: refused (125), nothing run" "125:" "$RC:$OUT"
		expect_match "$pfx: ... naming it" "protected path: $W/src/deep/\.env has 2 names \(hard links\)" "$(cat "$E")"
		rm -f "$W/env-link"
		sbx "$W" -- sh -c 'echo ran'
		expect "$pfx: the link removed: runs, nothing on stderr" "0:ran:" "$RC:$OUT:$(cat "$E")"
		LIST=$(cd / && "${as[@]}" env HOME="$H" "$HALO" index 2>&1)
		if [ "$base" = /tmp ]; then
			expect_match "$pfx: the index kept (tmpfs keeps ctimes itself)" "^  $W  " "$LIST"
		else
			expect "$pfx: no index (overlayfs reports a layer's ctimes)" 0 "$(grep -c "^  $W  " <<<"$LIST")"
		fi
		"${as[@]}" env HOME="$H" "$HALO" index stop "$W" >/dev/null 2>&1
		# The caches live in the home, on tmpfs here: no blocks to count.
		sbx "$W" -- sh -c 'mkdir -p "$npm_config_cache" && ln -s /nonexistent "$npm_config_cache/l" && echo planted'
		OUT=$(cd "$W" && "${as[@]}" env HOME="$H" "$HALO" cache list 2>&1)
		expect_match "$pfx: cache list shows the npm cache there (a size, not '-')" "^npm +npm_config_cache +[0-9.]+K " "$OUT"
		OUT=$(cd "$W" && "${as[@]}" env HOME="$H" "$HALO" cache clear npm 2>&1)
		expect_match "$pfx: cache clear says what it cleared (a tmpfs home: no blocks)" "^cleared npm " "$OUT"
		rm -rf "$W"
	done
	sbx / doctor
	expect "$who: doctor in the container: everything enforceable (0)" 0 "$RC"
	expect_match "$who: ... Landlock used there" "^landlock +available, ABI [0-9]+ +used" "$OUT"
}

if [ "${CT_INSIDE:-}" = 1 ]; then
	expect "the layout: / overlayfs, /var/tmp overlayfs, /tmp tmpfs, no systemd" \
		"overlayfs overlayfs tmpfs 0" \
		"$(stat -f -c %T /) $(stat -f -c %T /var/tmp) $(stat -f -c %T /tmp) $(ls /run/systemd 2>/dev/null | wc -l)"
	rows root
	rows user
	echo mark >"$CT_MARK" # root, outside halo-run: the overlay's upper layer takes it
	finish
	exit
fi

# ---------------------------------------------------------------- the host side
if [ "$AS" != root ]; then
	skip "halo-run in a container's root file system" \
		"building the layout needs root (mounts); the root pass runs its rows as root and as uid 65534"
	finish
	exit
fi
if ! unshare -m --propagation private true 2>/dev/null; then
	skip "halo-run in a container's root file system" "no private mount namespace here (unshare -m refused)"
	finish
	exit
fi
if ! grep -qw overlay /proc/filesystems && ! modprobe -q overlay 2>/dev/null; then
	skip "halo-run in a container's root file system" "no overlayfs in this kernel"
	finish
	exit
fi
stage=$(dirname "$HALO")
CT_MARK=/var/cache/halo-ct-mark.$$
export CT_MARK
OUT=$(CT_INSIDE=1 ROOT_SH_BIND="$stage $TMPDIR" timeout -k 5 240 "$stage/container/root.sh" bash "$0" 2>&1)
rc=$?
grep -E '^(ok|not ok|skip) - ' <<<"$OUT"
grep -qE '^ok - ' <<<"$OUT" || fail "the container layout" "rc $rc: $(tail -5 <<<"$OUT")"
[ "$rc" = 0 ] || fail "the rows inside the container layout" "exit $rc"
# Nothing reaches the host: a file root wrote to /var/cache in there is not here.
if [ -e "$CT_MARK" ]; then
	rm -f "$CT_MARK"
	fail "the host unchanged: a file written in the container's root is not on the host" "it is"
else
	ok "the host unchanged: a file written in the container's root is not on the host"
fi
finish
