#!/bin/bash
# halo-run learn with real tools (issue 27), each against its loopback registry
# (wf_origin.py) given a name: pip install into a venv, go mod download, cargo fetch
# with a sparse index, git clone over http. Each is learned under a policy that allows
# nothing (learn_lib.sh's learn_row), then run again from nothing under the learned
# policy with default deny: it passes, asking the registry again, and a host it did
# not use stays denied. npm ci is in t_learn.sh, git over ssh in t_learn_ssh.sh.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"
. "$IT/learn_lib.sh"

# ------------------------------------------------------------ pip
if need python3 && python3 -c 'import ensurepip, venv' 2>/dev/null; then
	start_registry pypi
	P=$(wait_port pypi)
	pip_index "$W/pypi.root"
	chmod -R a+rX "$W"
	chmod -R a+rwX "$WS"
	learn_row "pip install into a venv" pypi "^wfpkg 1.0 \+ wfdep 1.0$" \
		"rm -rf venv && timeout 60 python3 -m venv venv && timeout 60 venv/bin/pip install -q \
		--no-cache-dir --disable-pip-version-check --index-url http://pypi.test:$P/simple/ \
		--trusted-host pypi.test wfpkg && venv/bin/python -c 'import wfpkg; print(wfpkg.VALUE)'"
else
	skip "learn: pip install" "python3 with venv and ensurepip is not installed (python3-venv)"
fi

# ------------------------------------------------------------ go
if need go; then
	start_registry goproxy
	P=$(wait_port goproxy)
	go_fixture "$W/goproxy.root" "$WS/app"
	chmod -R a+rX "$W"
	chmod -R a+rwX "$WS"
	learn_row "go mod download" goproxy "^downloaded$" \
		"cd app && rm -rf .gopath && env GOPATH=\$PWD/.gopath GOCACHE=\$PWD/.gopath/cache \
		GOPROXY=http://goproxy.test:$P GOSUMDB=off GOFLAGS='-mod=mod -modcacherw' \
		timeout 60 go mod download && echo downloaded"
else
	skip "learn: go mod download" "$MISSING is not installed (golang-go)"
fi

# ------------------------------------------------------------ cargo, sparse index
NEW_CARGO=/root/.cargo/bin/cargo
RUSTUP_DIR=/root/.rustup
if [ -x "$NEW_CARGO" ] && [ -r "$RUSTUP_DIR" ] &&
	RUSTUP_HOME=$RUSTUP_DIR "$NEW_CARGO" --version >/dev/null 2>&1; then
	start_registry crates
	P=$(wait_port crates)
	U="http://crates.test:$P"
	cargo_index "$W/crates.root" "$U"
	mkdir -p "$WS/crate/src" "$WS/crate/.cargo"
	printf '[package]\nname = "wfapp"\nversion = "0.1.0"\nedition = "2018"\n\n[dependencies]\nwfcrate = { version = "1", registry = "wf" }\n' >"$WS/crate/Cargo.toml"
	echo 'fn main() {}' >"$WS/crate/src/main.rs"
	printf '[registries.wf]\nindex = "sparse+%s/sparse/"\n' "$U" >"$WS/crate/.cargo/config.toml"
	chmod -R a+rX "$W"
	chmod -R a+rwX "$WS"
	learn_row "cargo fetch, sparse index" crates "^fetched$" \
		"cd crate && rm -rf .cargo-home Cargo.lock && export RUSTUP_HOME=$RUSTUP_DIR \
		CARGO_HOME=\$PWD/.cargo-home PATH=${NEW_CARGO%/*}:/usr/bin:/bin && \
		timeout 60 cargo fetch -q && echo fetched"
else
	skip "learn: cargo fetch, sparse index" "no cargo >= 1.68 usable by this user ($NEW_CARGO with RUSTUP_HOME=$RUSTUP_DIR is root's; Debian's cargo has no sparse index)"
fi

# ------------------------------------------------------------ git clone over http
if need git; then
	start_registry gitwf
	P=$(wait_port gitwf)
	G=(git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main)
	mkdir -p "$W/gitwf.root/git"
	"${G[@]}" init -q "$W/gsrc"
	echo "cloned while learning" >"$W/gsrc/README"
	"${G[@]}" -C "$W/gsrc" add README && "${G[@]}" -C "$W/gsrc" commit -q -m init
	git clone -q --bare "$W/gsrc" "$W/gitwf.root/git/demo.git"
	printf '[safe]\n\tdirectory = *\n' >"$W/gitwf.root/gitconfig"
	chmod -R a+rX "$W"
	chmod -R a+rwX "$WS"
	# a fresh directory each time: the clone's hooks are guarded (not removable inside)
	learn_row "git clone over http" gitwf "^cloned while learning$" \
		"d=\$(mktemp -d -p . clone.XXXXXX) && timeout 60 git -c safe.directory=* clone -q \
		http://gitwf.test:$P/git/demo.git \$d/demo && cat \$d/demo/README"
else
	skip "learn: git clone over http" "$MISSING is not installed"
fi
finish
