#!/bin/bash
# Run every tests/integration/t_*.sh against the real binary, as root and again as an
# unprivileged user (uid/gid 65534 through setpriv), and print one closing tally.
#
# Each test script gets: HALO (the binary), HELPERS (dir of test helper binaries),
# AS (root|user) and a private scratch dir in TMPDIR. It prints "ok - name" /
# "not ok - name" lines (lib.sh does this) and exits non-zero on any failure.
set -u
build=${1:?usage: run.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)

# IT_HOSTS=v6: run as on a stock Debian 12, whose /etc/hosts maps localhost to ::1 as
# well as 127.0.0.1 (no test may depend on which answer the resolver gives first): in
# a mount namespace of its own, with such a copy bind-mounted over /etc/hosts (the
# real file is never touched). Root only, like the rest of this runner.
if [ "${IT_HOSTS:-}" = v6 ] && [ -z "${IT_HOSTS_APPLIED:-}" ]; then
	hosts=$(mktemp /tmp/halo-hosts.XXXXXX) || exit 1
	{
		grep -vE '^[[:space:]]*::1[[:space:]]' /etc/hosts
		printf '::1\tlocalhost ip6-localhost ip6-loopback\n'
	} >"$hosts"
	chmod 644 "$hosts"
	# Kept until the end: the tests bind their own hosts files over this one, and
	# the kernel refuses a mount over a deleted file.
	IT_HOSTS_APPLIED=1 unshare --mount --propagation private sh -c \
		'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$hosts" bash "$0" "$@"
	rc=$?
	rm -f "$hosts"
	exit $rc
fi
if [ -n "${IT_HOSTS_APPLIED:-}" ]; then
	echo "# /etc/hosts: localhost is $(getent ahosts localhost | awk '$2 == "STREAM" {print $1}' | paste -sd' ')"
fi

# The build tree may sit under a directory the unprivileged user cannot enter
# (/root/...): copy the binaries to a world-readable place for both runs.
stage=$(mktemp -d /tmp/halo-it.XXXXXX)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
cp "$build/halo-run" "$stage/"
ln -s halo-run "$stage/halo-sh"
ln -s halo-run "$stage/halo-bash"
mkdir -p "$stage/helpers"
[ -d "$build/helpers" ] && cp "$build"/helpers/* "$stage/helpers/" 2>/dev/null
cp -r "$here" "$stage/it"
[ -d "$here/../golden" ] && cp -r "$here/../golden" "$stage/golden" # t_render.sh's goldens
[ -d "$here/../../contrib" ] && cp -r "$here/../../contrib" "$stage/contrib" # t_ci_kit.sh runs contrib/ci
# t_docs.sh checks the README against the command table and the packaging.
mkdir -p "$stage/src/runner" "$stage/src/tools"
cp "$here/../../README.md" "$here/../../Makefile" "$stage/src/" 2>/dev/null
cp "$here/../../runner/cli.c" "$stage/src/runner/" 2>/dev/null
cp "$here/../../tools/mkdeb.sh" "$stage/src/tools/" 2>/dev/null
chmod -R a+rX "$stage"

total_pass=0; total_fail=0; total_skip=0
run_one() { # as script
	local as=$1 script=$2 out scratch rc
	scratch=$(mktemp -d /tmp/halo-scratch.XXXXXX)
	chmod 755 "$scratch"
	local -a pre=()
	if [ "$as" = user ]; then
		chown 65534:65534 "$scratch"
		pre=(setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env)
	fi
	out=$(cd "$scratch" && timeout -k 5 300 "${pre[@]}" env HOME="$scratch" PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
		HALO="$stage/halo-run" HELPERS="$stage/helpers" IT="$stage/it" AS="$as" TMPDIR="$scratch" \
		bash "$stage/it/$(basename "$script")" 2>&1)
	rc=$?
	rm -rf "$scratch"
	local p f s
	p=$(grep -c '^ok - ' <<<"$out")
	f=$(grep -c '^not ok - ' <<<"$out")
	s=$(grep -c '^skip - ' <<<"$out") # rows that could not check what they claim here
	total_skip=$((total_skip + s))
	[ "$s" -gt 0 ] && s=", $s skipped" || s=""
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; out+=$'\n'"not ok - $(basename "$script") exited $rc"; fi
	total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
	if [ "$f" -ne 0 ]; then
		echo "--- $(basename "$script") as $as: $p passed, $f failed$s"
		grep -v '^ok - ' <<<"$out" | tail -60
	else
		echo "--- $(basename "$script") as $as: $p passed$s"
		grep -E '^(skip - |# )' <<<"$out" # skips and the figures ("# ...")
	fi
}

# IT_ONLY="t_run t_env" (optional) runs only the named scripts.
for script in "$here"/t_*.sh; do
	[ -e "$script" ] || continue
	if [ -n "${IT_ONLY:-}" ]; then
		case " ${IT_ONLY//,/ } " in *" $(basename "$script" .sh) "*) ;; *) continue ;; esac
	fi
	run_one root "$script"
	run_one user "$script"
done
echo "integration: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ] && [ "$total_pass" -gt 0 ]
