#!/bin/bash
# The user-facing text against what the binary and the package do (issue 24): --help
# names every subcommand of the command table (runner/cli.c); the README's install line
# is the path `make deb` writes; the recipes' halo-bash/halo-sh paths are the ones the
# package installs (PREFIX=/usr, the Makefile's HALO_LINKS).
set -u
. "$IT/lib.sh"
SRC="$IT/../src"
[ -r "$SRC/runner/cli.c" ] && [ -r "$SRC/README.md" ] || {
	skip "docs" "the source tree was not staged next to the tests (run.sh copies it)"
	finish
	exit
}
HELP=$(timeout -k 2 10 "$HALO" --help 2>&1)

# ------------------------------------------------ every public subcommand in --help
# Rows of `commands[]`: {"name", runner_cmd_...}. Internal words start with "__" or are
# macros (the macOS trampoline); they are not for users.
names=$(sed -n 's/^[[:space:]]*{"\([a-z][a-z-]*\)",[[:space:]]*runner_cmd_.*/\1/p' "$SRC/runner/cli.c")
expect "the command table was read (at least 10 subcommands)" yes "$([ "$(wc -w <<<"$names")" -ge 10 ] && echo yes)"
missing=""
for n in $names; do
	grep -qE "(^|[[:space:]])halo-run $n( |\$)" <<<"$HELP" || missing+="$n "
done
expect "--help lists every subcommand of the command table" "" "$missing"
rmissing=""
for n in $names; do
	grep -qE "^halo-run $n( |\$)" "$SRC/README.md" || rmissing+="$n "
done
expect "the README's usage block lists every subcommand" "" "$rmissing"

# ---------------------------------------------------------- the install line
ver=$("$HALO" --version | awk '{print $2}')
build=$(sed -n 's/^BUILD[[:space:]]*?=[[:space:]]*\(build\)$/\1/p' "$SRC/Makefile" | head -1)
expect "the Makefile's Linux build directory" build "$build"
expect_match "mkdeb.sh writes BUILD/halo-run_VERSION_ARCH.deb" \
	'^DEB=\$TOP/\$BUILD/halo-run_\$\{VERSION\}_\$\{ARCH\}\.deb' "$(cat "$SRC/tools/mkdeb.sh")"
line=$(grep -o 'apt-get install \./[^` ]*\.deb' "$SRC/README.md" | head -1)
expect "the README's install line installs what \`make deb\` writes" \
	"apt-get install ./$build/halo-run_${ver}_amd64.deb" "$line"
expect_match "mkdeb.sh installs with PREFIX=/usr" 'make -s install DESTDIR="\$ROOT" PREFIX=/usr ' \
	"$(cat "$SRC/tools/mkdeb.sh")"

# ------------------------------------------------- the recipes' shell paths
links=$(sed -n 's/^HALO_LINKS[[:space:]]*?=[[:space:]]*//p' "$SRC/Makefile")
expect "the package's links" "halo-sh halo-bash" "$links"
bad=$(grep -oE '/usr/(local/)?bin/halo-(sh|bash)\b' "$SRC/README.md" | sort -u | grep -v '^/usr/bin/' | paste -sd' ')
expect "recipes name the package's /usr/bin/halo-bash and /usr/bin/halo-sh, nothing else" "" "$bad"
n=$(grep -cE '/usr/bin/halo-bash' "$SRC/README.md")
expect "the recipes do name /usr/bin/halo-bash" yes "$([ "$n" -ge 3 ] && echo yes)"
finish
