#!/bin/bash
# Workflow: pnpm 8, 9 and 10 under halo-run against the loopback npm registry of
# wf_lib.sh, and what each package manager says about halo-run's settings. pnpm's
# store is in the sandbox's cache (sandbox.caches: isolated), set through pnpm's own
# rc file, never node_modules/.pnpm-store or any .pnpm-store in the workspace: a
# second install from the lockfile in a fresh checkout asks the registry nothing.
# npm 9 (Debian 12's) and 11, pnpm 8-10, Yarn 1 and 4 print no warning about a
# variable or setting (npm 11 warned "Unknown env config "store-dir"" at every call).
# The tools are the ones `make deps` installs under /opt/halo-it-node (npm 11 is the
# system's); a missing one is a skip with the reason.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

T=${HALO_IT_NODE_TOOLS:-/opt/halo-it-node}
if ! need npm node; then
	skip "pnpm workflow" "$MISSING is not installed (make deps)"
	finish
	exit
fi
start_registry npm 0
P=$(wait_port npm)
R="http://npm.test:$P"
wf_policy npm.yaml npm.test

export npm_config_cache="$W/pack-cache" npm_config_update_notifier=false
dirs=($(mkpkg wf-left) $(mkpkg wf-right wf-left) $(mkpkg wf-p1))
npm_registry "$W/npm.root" "$R" "${dirs[@]}" 2>"$W/pack.err" ||
	fail "registry tree built" "$(head -c 300 "$W/pack.err")"
unset npm_config_cache npm_config_update_notifier
chmod -R a+rX "$W"
C=$(cd "$WS" && "$HALO" cache path)
CHECK='console.log(require("wf-right") + " " + require("wf-p1"))'
WANT="^wf-right\+wf-left wf-p1$"

# Any line a tool prints that says "warn" or "Unknown", but Yarn 1's own "You don't
# appear to have an internet connection" (it counts network interfaces: the sandbox's
# network namespace has only loopback; no setting of halo-run's).
warnings() { grep -iE 'warn|unknown' "$W/$1.err" | grep -v "have an internet connection" | head -3; }
no_warning() { # NAME LOG
	local w
	w=$(warnings "$2")
	if [ "$RC" != 0 ]; then fail "$1: no warning" "exit $RC: $(tail -c 300 "$W/$2.err")"
	elif [ -z "$w" ]; then ok "$1: no warning"; else fail "$1: no warning" "$w"; fi
}

for v in 8 9 10; do
	pn="$T/pnpm$v/bin/pnpm"
	if [ ! -x "$pn" ]; then
		skip "pnpm $v" "$pn is not installed (make deps)"
		continue
	fi
	d="$WS/pn$v"
	npm_project "$d" '"wf-right": "1.0.0", "wf-p1": "1.0.0"' "$R"
	chmod -R a+rwX "$WS"
	row "pnpm $v install from the loopback registry" npm.yaml pn$v-1.log "$WANT" \
		sh -c "cd pn$v && timeout 90 $pn install --reporter=append-only && node -e '$CHECK'"
	no_warning "pnpm $v install" pn$v-1.log
	got=$(ls -d "$C/pnpm-store"/v* 2>/dev/null | head -1)
	expect "pnpm $v: its store is in the sandbox's cache" yes "$([ -n "$got" ] && echo yes)"
	expect "pnpm $v: no store in the workspace" "" "$(find "$WS" -name .pnpm-store | head -3)"
	# A fresh checkout of the same project (its lockfile, no node_modules).
	mkdir -p "$d-2" && cp "$d/package.json" "$d/.npmrc" "$d/pnpm-lock.yaml" "$d-2/" 2>/dev/null
	chmod -R a+rwX "$WS"
	before=$(reqs npm)
	row "pnpm $v install again, in a fresh checkout" npm.yaml pn$v-2.log "$WANT" \
		sh -c "cd pn$v-2 && timeout 90 $pn install --frozen-lockfile --reporter=append-only &&
			node -e '$CHECK'"
	no_requests "pnpm $v install again" npm "$before"
	rm -rf "$C/pnpm-store" # the next version starts cold
done

# Without a usable home the caches are per-run, in the sandbox's /tmp: pnpm's store too,
# never the workspace.
if [ -x "$T/pnpm10/bin/pnpm" ]; then
	npm_project "$WS/pr" '"wf-p1": "1.0.0"' "$R"
	chmod -R a+rwX "$WS"
	HOME=/nonexistent row "pnpm 10 without a home: install" npm.yaml pr.log "^wf-p1$" \
		sh -c "cd pr && timeout 90 $T/pnpm10/bin/pnpm install --reporter=append-only &&
			$T/pnpm10/bin/pnpm config get store-dir >&2 && node -e 'console.log(require(\"wf-p1\"))'"
	expect "pnpm 10 without a home: its store is per-run" /tmp/halo-cache/pnpm-store \
		"$(grep '^/' "$W/pr.log.err" | tail -1)"
	expect "pnpm 10 without a home: no store in the workspace" "" \
		"$(find "$WS" -name .pnpm-store | head -3)"
fi

# The configuration directory: read-only inside, and every tool finds the home's own
# configuration through it as before (git's ~/.config/git/config here).
mkdir -p "$HOME/.config/git" && printf '[user]\n\tname = Host Name\n' >"$HOME/.config/git/config"
chmod -R a+rX "$HOME/.config"
run_wf npm.yaml xdg.log sh -c 'git config --global user.name; touch "$XDG_CONFIG_HOME/x" 2>&1 ||
	echo refused; mkdir "$XDG_CONFIG_HOME/git2" 2>/dev/null || echo refused'
expect "XDG_CONFIG_HOME: the home's git config is read through it" "Host Name" "$(head -1 "$W/xdg.log")"
expect "XDG_CONFIG_HOME: read-only inside" "refused refused" "$(grep -c refused "$W/xdg.log" |
	sed 's/^2$/refused refused/')"

# The home as the workspace keeps its own ~/.config (a new tool's configuration is
# written there); pnpm's store is still the sandbox's cache, even with pnpm's home
# (~/.local/share/pnpm) on PATH, which the persistence guard keeps read-only.
if [ -x "$T/pnpm10/bin/pnpm" ]; then
	HW=$(mktemp -d /var/tmp/halo-it-homews.XXXXXX)
	mkdir -p "$HW/.local/share/pnpm" "$HW/.config"
	OUT=$(cd "$HW" && HOME=$HW PATH="$HW/.local/share/pnpm:$T/pnpm10/bin:$PATH" timeout 60 \
		"$HALO" -- sh -c 'echo "xdg=${XDG_CONFIG_HOME-unset}"; mkdir "$HOME/.config/newtool" &&
		echo made; pnpm store path' 2>"$W/hw.err" </dev/null)
	CW=$(cd "$HW" && HOME=$HW "$HALO" cache path)
	expect "home as the workspace: XDG_CONFIG_HOME left unset" xdg=unset "$(sed -n 1p <<<"$OUT")"
	expect "home as the workspace: a new ~/.config entry is written there" made "$(sed -n 2p <<<"$OUT")"
	expect_match "home as the workspace: pnpm's store is the sandbox's cache" "^$CW/pnpm-store" \
		"$(sed -n 3p <<<"$OUT")"
	rm -rf "$HW"
fi

# What each tool says about halo-run's variables and settings: a command that reads the
# whole configuration (npm and pnpm print "Unknown ... config" while loading it).
cfg_row() { # NAME LOG CMD...
	local n=$1 l=$2
	shift 2
	run_wf npm.yaml "$l" "$@"
	no_warning "$n reads halo-run's settings" "$l"
}
cfg_row "npm $(npm -v)" npm11.log npm config get cache
for t in "npm 9:npm9/bin/npm config get cache" "pnpm 8:pnpm8/bin/pnpm config list" \
	"pnpm 9:pnpm9/bin/pnpm config list" "pnpm 10:pnpm10/bin/pnpm config list" \
	"Yarn 1:yarn1/bin/yarn config list" "Yarn 4:yarn4/bin/yarn config get cacheFolder"; do
	n=${t%%:*} c=(${t#*:})
	if [ -x "$T/${c[0]}" ]; then
		cfg_row "$n" "cfg-${n// /}.log" "$T/${c[0]}" "${c[@]:1}"
	else
		skip "$n reads halo-run's settings" "$T/${c[0]} is not installed (make deps)"
	fi
done
# Yarn 4's cache (its global folder) is the sandbox's too, not the read-only ~/.yarn/berry.
if [ -x "$T/yarn4/bin/yarn" ]; then
	run_wf npm.yaml y4.log "$T/yarn4/bin/yarn" config get globalFolder
	expect "Yarn 4: its global folder (the cache) is the sandbox's" "$C/yarn-berry" "$(cat "$W/y4.log")"
fi
finish
