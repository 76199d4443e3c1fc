#!/bin/sh
# halo-ci.sh: a CI job's build under halo-run, for any CI that runs a shell script.
#
#   halo-ci.sh --policy ci/halo.yaml [--timeout 30m] [--audit FILE] [--summary FILE]
#              [--workspace DIR] [--verbose] -- make test
#
# 1. `halo-run verify --policy P`: this runner enforces the policy, or the job stops
#    here (with verify's whole table and `halo-run doctor`'s advice) before the build
#    runs; when it passes, its summary line (the table too with --verbose);
# 2. the build: `halo-run --policy P --timeout T --audit A --summary-md S
#    --fail-on-deny -- CMD`, with the audit OUTSIDE the workspace (default: a fresh
#    directory under $RUNNER_TEMP, else $TMPDIR, else /tmp) so that
#    nothing the build runs can rewrite it;
# 3. the report: markdown appended to S ($GITHUB_STEP_SUMMARY when set, else
#    summary.md next to the audit), the text version in the job log.
# Exit: the build's status; 122 when it exited 0 but egress was denied; verify's
# status (1) when the runner cannot enforce the policy; 125 on a usage error.
# Environment: HALO_RUN (default: halo-run on PATH).
set -u

HALO=${HALO_RUN:-halo-run}
policy='' timeout=30m audit='' summary=${GITHUB_STEP_SUMMARY:-} workspace=$(pwd) verbose=

die() {
	echo "halo-ci: $*" >&2
	exit 125
}
while [ $# -gt 0 ]; do
	case $1 in
	--policy | --timeout | --audit | --summary | --workspace)
		if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value"; fi
		case $1 in
		--policy) policy=$2 ;;
		--timeout) timeout=$2 ;;
		--audit) audit=$2 ;;
		--summary) summary=$2 ;;
		--workspace) workspace=$2 ;;
		esac
		shift 2
		;;
	--verbose)
		verbose=1
		shift
		;;
	--)
		shift
		break
		;;
	*) die "unknown argument '$1' (halo-ci.sh --policy F [--timeout D] [--audit F] [--summary F] [--verbose] -- CMD...)" ;;
	esac
done
[ $# -gt 0 ] || die "no build command (halo-ci.sh --policy F -- CMD...)"
if [ -z "$policy" ] || [ ! -r "$policy" ]; then die "--policy: '$policy' is not a readable policy file"; fi
command -v "$HALO" >/dev/null 2>&1 || die "$HALO not found (install the package: apt-get install ./halo-run_*.deb)"
ws=$(cd "$workspace" 2>/dev/null && pwd -P) || die "--workspace: '$workspace' is not a directory"

# The audit lives outside the workspace: a build that can write its own record proves
# nothing. A directory of its own, made now, so that no one else's file is reused.
if [ -z "$audit" ]; then
	base=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
	dir=$(mktemp -d "$base/halo-audit.XXXXXX") || die "cannot make an audit directory in $base"
	audit=$dir/egress.jsonl
fi
adir=$(cd "$(dirname "$audit")" 2>/dev/null && pwd -P) || die "--audit: the directory of '$audit' does not exist"
case "$adir/" in
"$ws"/*) die "--audit $audit is inside the workspace $ws: keep it outside, where the build cannot reach it" ;;
esac
audit=$adir/$(basename "$audit")
[ -n "$summary" ] || summary=$adir/summary.md

echo "halo-ci: verify: does this runner enforce $policy?" >&2
vout=$(mktemp "${TMPDIR:-/tmp}/halo-ci-verify.XXXXXX") || die "cannot make a temporary file"
"$HALO" verify --policy "$policy" --workspace "$ws" >"$vout" 2>&1
rc=$?
# A clean run says its summary (and anything the launch said); the table is for a
# failure, or --verbose.
if [ "$rc" != 0 ] || [ -n "$verbose" ]; then
	cat "$vout" >&2
else
	sed -n '/^the launch said:$/,/^$/p; /^verify: /p' "$vout" | sed '/^$/d' >&2
fi
rm -f "$vout"
if [ "$rc" != 0 ]; then
	echo "halo-ci: this runner cannot enforce the policy; what to change:" >&2
	"$HALO" doctor --policy "$policy" --workspace "$ws" >&2
	exit "$rc"
fi

printf "halo-ci: build: %s (audit: %s)\n" "$*" "$audit" >&2
"$HALO" --policy "$policy" --workspace "$ws" --timeout "$timeout" --audit "$audit" \
	--summary-md "$summary" --fail-on-deny -- "$@"
rc=$?

echo "halo-ci: egress report (markdown in $summary):" >&2
"$HALO" report "$audit" --format text >&2
case $rc in
0) echo "halo-ci: build passed, no egress denied" >&2 ;;
122) echo "halo-ci: the build passed but egress was denied: failing the job (exit 122)" >&2 ;;
124) echo "halo-ci: the build hit the ${timeout} wall-clock limit (exit 124)" >&2 ;;
*) echo "halo-ci: the build failed (exit $rc)" >&2 ;;
esac
exit "$rc"
