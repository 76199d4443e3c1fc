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
trap 'rm -rf "$stage"' EXIT # (and the results, below)
chmod 755 "$stage"
cp "$build/halo-run" "$stage/"
ln -s halo-run "$stage/halo-sh"
ln -s halo-run "$stage/halo-bash"
mkdir -p "$stage/helpers"
[ -d "$build/helpers" ] && cp "$build"/helpers/* "$stage/helpers/" 2>/dev/null
cp -r "$here" "$stage/it"
[ -d "$here/../golden" ] && cp -r "$here/../golden" "$stage/golden" # t_render.sh's goldens
[ -d "$here/../../contrib" ] && cp -r "$here/../../contrib" "$stage/contrib" # t_ci_kit.sh runs contrib/ci
cp -r "$here/../container" "$stage/container" # t_container.sh builds a container's root
# t_docs.sh checks the README against the command table and the packaging.
mkdir -p "$stage/src/runner" "$stage/src/tools"
cp "$here/../../README.md" "$here/../../HACKING.md" "$here/../../Makefile" "$stage/src/" 2>/dev/null
cp -r "$here/../../docs" "$stage/src/" 2>/dev/null      # t_docs.sh runs every example of docs/
[ -d "$build/man" ] && cp -r "$build/man" "$stage/src/" # and renders the man pages made from them
cp "$here/../../runner/cli.c" "$stage/src/runner/" 2>/dev/null
cp "$here/../../tools/mkdeb.sh" "$here/../../tools/mkman.py" "$stage/src/tools/" 2>/dev/null
# t_proxy_units.sh checks halo-run proxy's systemd units and, when one was built, the
# package that ships them.
cp -r "$here/../../packaging" "$stage/src/" 2>/dev/null
cp "$build"/halo-run_*.deb "$stage/src/" 2>/dev/null
chmod -R a+rX "$stage"

# Scripts run in parallel, IT_JOBS at a time (default: one per CPU; IT_JOBS=1 is the
# old one-after-another order). Alone on 2 cores, 3 jobs ran the suite in 308 s (156%
# CPU) against 2 jobs' 473 s; but in `make check` the ASan, fuzz and portable builds
# share the cores, and there 3 jobs made the whole slower (669 s against 613 s): the
# machine is busy either way. IT_JOBS=3 is worth it for the suite alone. A job is one script, as root and then as uid 65534,
# in scratch directories of its own; its session control directory is its own too
# (XDG_RUNTIME_DIR below), so no two scripts share state. A script that cannot share
# the machine (it measures what others would disturb) says `# it: alone` on a line of
# its own: it runs after the others, by itself. Each script's lines are printed
# together, in name order, once it is done: never interleaved.
jobs=${IT_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: IT_JOBS must be a positive number, got '$jobs'" >&2; exit 2 ;; esac
res=$(mktemp -d /tmp/halo-it-res.XXXXXX) || exit 1
trap 'rm -rf "$stage" "$res"' EXIT
t_start=$SECONDS

run_one() { # as script: prints the script's block; appends "p f s" to $res/$idx.cnt
	local as=$1 script=$2 out scratch rt rc t0=$SECONDS
	scratch=$(mktemp -d /tmp/halo-scratch.XXXXXX)
	rt=$(mktemp -d /tmp/halo-rt.XXXXXX) # the session control directory's parent
	chmod 755 "$scratch"
	chmod 700 "$rt"
	local -a pre=()
	if [ "$as" = user ]; then
		chown 65534:65534 "$scratch" "$rt"
		pre=(setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env)
	fi
	out=$(cd "$scratch" && timeout -k 5 300 "${pre[@]}" env HOME="$scratch" PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
		HALO="$stage/halo-run" HELPERS="$stage/helpers" IT="$stage/it" AS="$as" TMPDIR="$scratch" \
		XDG_RUNTIME_DIR="$rt" IT_STRICT_TIMES="${IT_STRICT_TIMES:-}" bash "$stage/it/$(basename "$script")" 2>&1)
	rc=$?
	rm -rf "$scratch" "$rt"
	local p f s secs=", $((SECONDS - t0)) s"
	p=$(grep -c '^ok - ' <<<"$out")
	f=$(grep -c '^not ok - ' <<<"$out")
	s=$(grep -c '^skip - ' <<<"$out") # rows that could not check what they claim here
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; out+=$'\n'"not ok - $(basename "$script") exited $rc"; fi
	echo "$p $f $s" >>"$res/$idx.cnt"
	[ "$s" -gt 0 ] && s=", $s skipped" || s=""
	if [ "$f" -ne 0 ]; then
		echo "--- $(basename "$script") as $as: $p passed, $f failed$s$secs"
		grep -v '^ok - ' <<<"$out" | tail -60
	else
		echo "--- $(basename "$script") as $as: $p passed$s$secs"
		grep -E '^(skip - |# )' <<<"$out" # skips and the figures ("# ...")
	fi
}
job() { # idx: one script, as root then as the user; $res/$idx.done when finished
	local idx=$1
	{
		run_one root "${scripts[$idx]}"
		run_one user "${scripts[$idx]}"
	} >"$res/$idx.out" 2>&1
	: >"$res/$idx.done"
}
shown=0
show_done() { # print the finished blocks, in name order, up to the first unfinished one
	while [ "$shown" -lt "${#scripts[@]}" ] && [ -e "$res/$shown.done" ]; do
		cat "$res/$shown.out"
		shown=$((shown + 1))
	done
}

# IT_ONLY="t_run t_env" (optional) runs only the named scripts.
scripts=()
for script in "$here"/t_*.sh; do
	[ -e "$script" ] || continue
	if [ -n "${IT_ONLY:-}" ]; then
		case " ${IT_ONLY//,/ } " in *" $(basename "$script" .sh) "*) ;; *) continue ;; esac
	fi
	scripts+=("$script")
done
# The longest first, in this order (seconds for both passes, alone on 2 cores, after
# the waits in hook_wrap, decider, proxy_bounds, egress_bypass, limits and index were
# cut: tls 50, index 45-55, tls_hello 37, session 35, wf_pnpm 33, learn_tools 30,
# decider 23, egress_bypass 22, session_socket 22, limits 21, egress 21, wf_npm 21,
# proxy_bounds 20, recipes 18, hook_wrap 17, capture 16, hook_bash 15, hook 13; in CI,
# 2 at a time beside the niced builds, about half as much again), so that the pool does
# not end waiting on one of them; the rest in name order.
slow="t_tls t_index t_tls_hello t_session t_wf_pnpm t_learn_tools t_decider t_egress_bypass
	t_session_socket t_limits t_egress t_wf_npm t_proxy_bounds t_recipes t_hook_wrap t_capture
	t_hook_bash t_hook"
order=() alone=() ranked=()
for n in $slow; do
	for i in "${!scripts[@]}"; do [ "$(basename "${scripts[$i]}" .sh)" = "$n" ] && ranked+=("$i"); done
done
for i in "${!scripts[@]}"; do
	case " ${slow//[[:space:]]/ } " in *" $(basename "${scripts[$i]}" .sh) "*) ;; *) ranked+=("$i") ;; esac
done
for i in "${ranked[@]}"; do
	if grep -qx '# it: alone' "${scripts[$i]}"; then alone+=("$i"); else order+=("$i"); fi
done
for idx in "${order[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
		show_done
	done
	job "$idx" &
done
wait
show_done
for idx in "${alone[@]}"; do
	job "$idx"
	show_done
done

total_pass=0 total_fail=0 total_skip=0
for idx in "${!scripts[@]}"; do
	while read -r p f s; do
		total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
	done <"$res/$idx.cnt"
done
echo "integration: $total_pass passed, $total_fail failed, $total_skip skipped ($((SECONDS - t_start)) s, $jobs at a time)"
[ "$total_fail" -eq 0 ] && [ "$total_pass" -gt 0 ]
