#!/bin/bash
# Workflow: cargo under halo-run with a local registry served on the host's loopback
# (crates.test), the default policy plus only crates.test allowed. A crate with one
# dependency, wfcrate, from a registry named in the project's .cargo/config.toml:
# - Debian's cargo (0.66, no sparse protocol): a git index (config.json + the index
#   file) served by `git http-backend`, .crate downloads as static files;
# - a cargo >= 1.68 if one is usable by this user (rustup's, under /root, is root's
#   only): the same registry as a sparse index (static config.json + index files).
# The host's ~/.cargo/registry is unchanged afterwards.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

DEB_CARGO=/usr/bin/cargo
NEW_CARGO=/root/.cargo/bin/cargo
RUSTUP_DIR=/root/.rustup
if [ ! -x "$DEB_CARGO" ] && [ ! -x "$NEW_CARGO" ]; then
	skip "cargo workflow" "cargo is not installed (make deps: cargo)"
	finish
	exit
fi
start_registry crates 0
P=$(wait_port crates)
U="http://crates.test:$P"
wf_policy cargo.yaml crates.test

# The registry: wfcrate-1.0.0.crate (a .tar.gz), its index line, config.json; the
# index once as a git repository and once as a sparse tree.
cargo_index "$W/crates.root" "$U"
G=(git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=master)
"${G[@]}" -C "$W/crates.root/gitsrc" init -q &&
	"${G[@]}" -C "$W/crates.root/gitsrc" add -A &&
	"${G[@]}" -C "$W/crates.root/gitsrc" commit -q -m index &&
	mkdir -p "$W/crates.root/git" &&
	git clone -q --bare "$W/crates.root/gitsrc" "$W/crates.root/git/index.git" ||
	fail "git index built"
printf '[safe]\n\tdirectory = *\n' >"$W/crates.root/gitconfig"

# project DIR INDEX-URL: a binary crate using wfcrate from the registry "wf"
project() {
	mkdir -p "$WS/$1/src" "$WS/$1/.cargo"
	cat >"$WS/$1/Cargo.toml" <<EOF
[package]
name = "wfapp"
version = "0.1.0"
edition = "2018"

[dependencies]
wfcrate = { version = "1", registry = "wf" }
EOF
	echo 'fn main() { println!("{}", wfcrate::hello()); }' >"$WS/$1/src/main.rs"
	printf '[registries.wf]\nindex = "%s"\n' "$2" >"$WS/$1/.cargo/config.toml"
}
project git "$U/git/index.git"
project sparse "sparse+$U/sparse/"
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"
seed_caches "$HOME/.cargo/registry"

C="timeout 60 cargo build -q && ./target/debug/wfapp"
if [ -x "$DEB_CARGO" ]; then
	row "cargo $($DEB_CARGO --version | cut -d' ' -f2) build, git index through git http-backend" \
		cargo.yaml git.log "^hello from wfcrate$" sh -c "cd git && PATH=/usr/bin:/bin; $C"
	if [ "$RC" != 0 ]; then
		D="cd git && PATH=/usr/bin:/bin CARGO_HOME=\$PWD/.diag-cargo; export CARGO_HOME; rm -rf target"
		diag "Debian's cargo with CARGO_HOME in the workspace" cargo.yaml gitdiag.log sh -c "$D; $C"
		# libgit2's transport (git2-curl) sends "Host: crates.test" without the port
		diag "the same, with net.git-fetch-with-cli" cargo.yaml gitdiag2.log \
			sh -c "$D; export CARGO_NET_GIT_FETCH_WITH_CLI=true; $C"
	fi
else
	skip "cargo build, git index" "no $DEB_CARGO (make deps: cargo)"
fi
if [ -x "$NEW_CARGO" ] && [ -r "$RUSTUP_DIR" ] && RUSTUP_HOME=$RUSTUP_DIR "$NEW_CARGO" --version >/dev/null 2>&1; then
	V=$(RUSTUP_HOME=$RUSTUP_DIR "$NEW_CARGO" --version | cut -d' ' -f2)
	NC="cd sparse && export RUSTUP_HOME=$RUSTUP_DIR PATH=${NEW_CARGO%/*}:/usr/bin:/bin"
	row "cargo $V build, sparse index" cargo.yaml sparse.log "^hello from wfcrate$" sh -c "$NC; $C"
	[ "$RC" = 0 ] || diag "cargo $V with CARGO_HOME in the workspace" cargo.yaml sparsediag.log \
		sh -c "$NC CARGO_HOME=\$PWD/.diag-cargo; rm -rf target; $C"
else
	skip "cargo build, sparse index" "no cargo >= 1.68 usable by this user ($NEW_CARGO with RUSTUP_HOME=$RUSTUP_DIR is root's)"
fi
caches_unchanged "cargo"
finish
