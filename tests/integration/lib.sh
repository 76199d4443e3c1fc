# Shared helpers for integration tests; source it: . "$IT/lib.sh"
# ok NAME / fail NAME MSG print TAP-like lines that run.sh counts.
_fails=0
ok() { echo "ok - $AS: $1"; }
fail() { echo "not ok - $AS: $1${2:+: $2}"; _fails=$((_fails + 1)); }
# skip NAME REASON: a row that cannot check what it claims here (no tool, not root, a
# kernel without the feature): counted as skipped by run.sh, never as passed.
skip() { echo "skip - $AS: $1: $2"; }
# expect NAME WANT GOT
expect() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "want [$2] got [$3]"; fi; }
# expect_rc NAME WANT_RC CMD... (runs CMD, compares exit status)
expect_rc() { local n=$1 w=$2; shift 2; "$@" >/dev/null 2>&1; expect "$n" "$w" "$?"; }
# expect_match NAME REGEX TEXT
expect_match() { if grep -qE -- "$2" <<<"$3"; then ok "$1"; else fail "$1" "no match for /$2/ in: $(head -c 400 <<<"$3")"; fi; }
finish() { [ "$_fails" -eq 0 ]; }
