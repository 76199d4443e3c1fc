# Shared by the workflow tests t_wf_*.sh (source after lib.sh and egress_lib.sh).
#
# Real developer workflows under halo-run, each under the default policy plus only its
# own registry's name allowed (and allowPrivate 127.0.0.0/8, since the registry is on
# loopback and the proxy refuses loopback addresses otherwise). The registries are
# wf_origin.py trees on the host's 127.0.0.1, ports picked by the kernel, named through
# egress_lib.sh's bind-mounted /etc/hosts: no lookup can leave the machine.
#
# HOME: run.sh's scratch dir is under /tmp, which the sandbox covers with its own
# tmpfs, so tools would find an empty writable home there and nothing would be kept or
# at stake. A real home is visible and read-only inside but for the workspace: HOME
# here is a fresh directory under /var/tmp (removed at exit, whatever a tool left in it). A tool that writes its
# cache under HOME then needs sandbox.caches. The host's cache directories are seeded
# with one entry each (as a real user's would be) and must hold exactly that entry
# after the runs.
HOME=$(mktemp -d /var/tmp/halo-wf-home.XXXXXX) || exit 1
export HOME
chmod 755 "$HOME"
# (chmod first: Go keeps its module cache read-only, and rm -rf as a user cannot empty
# such a directory: every uid-65534 pass left its home behind in /var/tmp.)
trap 'eg_cleanup; chmod -R u+w "$HOME" 2>/dev/null; rm -rf "$HOME"' EXIT
echo "127.0.0.1 npm.test goproxy.test pypi.test crates.test gitwf.test" >>"$W/etc/hosts"


# start_registry NAME [DELAY_MS]: wf_origin.py over $W/NAME.root; $W/NAME.port, .log
start_registry() {
	mkdir -p "$W/$1.root"
	timeout 280 python3 "$IT/wf_origin.py" 127.0.0.1 "$W/$1.port" "$W/$1.log" \
		"$W/$1.root" "${2:-0}" 2>>"$W/$1.err" &
	pids+=($!)
}
reqs() { cat "$W/$1.log" 2>/dev/null | grep -c '^REQ'; } # requests registry NAME answered
# no_requests NAME REGISTRY BEFORE: the warm run asked the registry nothing
no_requests() {
	local n=$(($(reqs "$2") - $3))
	if [ "$RC" != 0 ]; then
		fail "$1: no registry request (the cache answered)" "the run failed"
	elif [ "$n" = 0 ]; then ok "$1: no registry request (the cache answered)"; else
		fail "$1: no registry request (the cache answered)" "$n requests: the first run's cache was not kept"; fi
}

# wf_policy FILE HOST...: the default policy plus only these names
wf_policy() {
	local f=$1 hosts
	shift
	hosts=$(printf '%s, ' "$@")
	cat >"$W/$f" <<EOF
egress:
  allowedDomains: [${hosts%, }]
  allowPrivate: [127.0.0.0/8]
EOF
	chmod a+r "$W/$f"
}

# run_wf POLICY LOG CMD...: halo-run CMD in $WS under POLICY, bounded; stdout in $W/LOG,
# stderr in $W/LOG.err, exit status in $RC and wall time in $MS (milliseconds)
run_wf() {
	local pol=$1 log=$2 t0
	shift 2
	t0=$(date +%s%N)
	HR_ERR="$W/$log.err" hr "$pol" "$log.audit" "$@" >"$W/$log"
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
}
# tailof LOG: a run's last words, and what they point at when it is a known gap
tailof() {
	local out pat
	out=$(cat "$W/$1" "$W/$1.err" 2>/dev/null | tr '\n' ' ')
	[ ${#out} -le 600 ] || out=${out: -600}
	printf '%s' "$out"
	for pat in "${!HINTS[@]}"; do
		grep -qE -- "$pat" <<<"$out" && printf ' [%s]' "${HINTS[$pat]}"
	done
}
declare -A HINTS=(
	["(ead-only file system|EROFS|ENOENT).*$HOME|$HOME.*(ead-only file system|EROFS)"]="a cache under HOME is not writable inside: needs sandbox.caches"
	["connect: permission denied|Failed to connect to (127\\.0\\.0\\.1|::1) port [0-9]+ after"]="a loopback connect inside was refused: needs the sandbox's own loopback"
	["HTTP 501|returned error: 501"]="the proxy refused a chunked request body (501)"
	["unknown key 'hostPorts'"]="this halo-run has no egress.hostPorts"
	["got 400; class=Net"]="the proxy answered 400: libgit2 (git2-curl) sends Host without the port"
)

# row NAME POLICY LOG WANT CMD...: run CMD; ok when it exits 0 and a line of its stdout
# matches the regex WANT, else the end of its output
row() {
	local name=$1 pol=$2 log=$3 want=$4
	shift 4
	run_wf "$pol" "$log" "$@"
	if [ "$RC" = 0 ] && grep -qE -- "$want" "$W/$log"; then ok "$name"; else
		fail "$name" "exit $RC: $(tailof "$log")"; fi
}

# diag NAME POLICY LOG CMD...: after a failure, the same work with the tool's caches
# moved into the workspace, to tell a cache problem from any other: a "# " line only,
# never counted
diag() {
	local name=$1
	shift
	run_wf "$@"
	if [ "$RC" = 0 ]; then echo "# diagnostic, $name: exit 0"; else
		echo "# diagnostic, $name: exit $RC: $(tailof "$2")"; fi
}

# faster NAME FIRST_MS FIRST_RC SECOND_MS SECOND_RC: the warm run beat the cold one by
# 15% at least (the registries answer 200 ms late, as across a network): noise on a
# loaded machine stays below that, a cache that was not kept does not.
# That the cache was kept is shown by no_requests (the second run asks the registry
# nothing); the times are a figure: on a machine shared with other scripts (run.sh's
# pool) or users, a warm run is not reliably 15% faster. IT_STRICT_TIMES=1 checks it.
faster() {
	echo "# $1: first run ${2} ms (exit $3), second run ${4} ms (exit $5)"
	if [ "$3" != 0 ] || [ "$5" != 0 ]; then
		fail "$1: both runs succeed" "a run failed (exits $3, $5)"
	elif [ "${IT_STRICT_TIMES:-}" != 1 ]; then
		ok "$1: both runs succeed (the second's speed is a figure, above)"
	elif [ $(($4 * 100)) -le $(($2 * 85)) ]; then
		ok "$1: second run faster (${4} ms against ${2} ms)"
	else
		fail "$1: second run faster" "${4} ms against ${2} ms: not 15% faster, the cache was not kept?"
	fi
}

# Host caches: seed_caches DIR...; then caches_unchanged NAME after the runs.
seed_caches() {
	local d
	HOST_CACHES=("$@")
	for d in "$@"; do
		mkdir -p "$d" && echo seed >"$d/host-entry"
	done
	snap_caches >"$W/caches.before"
}
snap_caches() { find "${HOST_CACHES[@]}" -printf '%p %s %T@\n' 2>/dev/null | sort; }
caches_unchanged() {
	local diff
	diff=$(snap_caches | diff "$W/caches.before" - | grep '^[<>]' | head -5 | tr '\n' ' ')
	if [ -z "$diff" ]; then ok "$1: host caches unchanged (${HOST_CACHES[*]#"$HOME"/})"; else
		fail "$1: host caches unchanged" "$diff"; fi
}

# ------------------------------------------------------------ npm registries
# npm_project DIR DEPS-JSON REGISTRY: package.json and the .npmrc naming the registry
npm_project() {
	mkdir -p "$1"
	printf '{"name": "%s", "version": "1.0.0", "private": true, "dependencies": {%s}}\n' \
		"${1##*/}" "$2" >"$1/package.json"
	printf 'registry=%s/\naudit=false\nfund=false\nupdate-notifier=false\n' "$3" >"$1/.npmrc"
}
# npm_lock ROOT DIR: DIR's package-lock.json, written by hand from the packuments under
# ROOT: the first `npm ci` is then the first contact with the registry (cold cache).
npm_lock() {
	python3 - "$1" "$2" <<'EOF'
import json, os, sys
root, proj = sys.argv[1:]
pj = json.load(open(os.path.join(proj, "package.json")))
pkgs = {"": {"name": pj["name"], "version": "1.0.0", "dependencies": pj["dependencies"]}}
for name in pj["dependencies"]:
    v = json.load(open(os.path.join(root, name)))["versions"]["1.0.0"]
    pkgs["node_modules/" + name] = {"version": "1.0.0", "resolved": v["dist"]["tarball"],
                                    "integrity": v["dist"]["integrity"]}
lock = {"name": pj["name"], "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": pkgs}
json.dump(lock, open(os.path.join(proj, "package-lock.json"), "w"), indent=2)
EOF
}

# npm_registry ROOT URL PKGDIR...: pack each package, write its packument under ROOT
npm_registry() {
	local root=$1 url=$2
	shift 2
	python3 - "$root" "$url" "$@" <<'EOF'
import base64, hashlib, json, os, subprocess, sys
root, url, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(os.path.join(root, "tgz"), exist_ok=True)
for d in dirs:
    meta = json.load(open(os.path.join(d, "package.json")))
    name, ver = meta["name"], meta["version"]
    tgz = os.path.join(root, "tgz", "%s-%s.tgz" % (name, ver))
    if not os.path.exists(tgz):
        out = subprocess.run(["npm", "pack", "--silent", "--pack-destination",
                              os.path.join(root, "tgz"), d], check=True, timeout=60,
                             stdout=subprocess.PIPE).stdout.decode().strip()
        os.rename(os.path.join(root, "tgz", out.splitlines()[-1]), tgz)
    data = open(tgz, "rb").read()
    integ = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    v = dict(meta, dist={"tarball": "%s/tgz/%s-%s.tgz" % (url, name, ver),
                         "integrity": integ, "shasum": hashlib.sha1(data).hexdigest()})
    doc = {"name": name, "dist-tags": {"latest": ver}, "versions": {ver: v}}
    json.dump(doc, open(os.path.join(root, name), "w"))
EOF
}
mkpkg() { # NAME [DEP]: a tiny package under $W/src
	local d="$W/src/$1" deps=""
	mkdir -p "$d"
	[ -n "${2:-}" ] && deps=", \"dependencies\": {\"$2\": \"^1.0.0\"}"
	printf '{"name": "%s", "version": "1.0.0", "main": "index.js"%s}\n' "$1" "$deps" >"$d/package.json"
	if [ -n "${2:-}" ]; then
		printf 'module.exports = "%s+" + require("%s");\n' "$1" "$2" >"$d/index.js"
	else
		printf 'module.exports = "%s";\n' "$1" >"$d/index.js"
	fi
	echo "$d"
}

# go_fixture ROOT APPDIR: a Go module proxy tree (list, .info, .mod and the zip of
# example.com/greet v1.0.0) under ROOT, and under APPDIR a module using it whose test
# serves with httptest.NewServer
go_fixture() {
	python3 - "$1" <<'EOF'
import os, sys, zipfile
root, mod, ver = sys.argv[1], "example.com/greet", "v1.0.0"
d = os.path.join(root, mod, "@v")
os.makedirs(d)
gomod = "module %s\n\ngo 1.19\n" % mod
src = 'package greet\n\nfunc Hello(who string) string { return "hello, " + who }\n'
open(os.path.join(d, "list"), "w").write(ver + "\n")
open(os.path.join(d, ver + ".info"), "w").write('{"Version":"%s","Time":"2024-01-01T00:00:00Z"}' % ver)
open(os.path.join(d, ver + ".mod"), "w").write(gomod)
with zipfile.ZipFile(os.path.join(d, ver + ".zip"), "w") as z:
    z.writestr("%s@%s/go.mod" % (mod, ver), gomod)
    z.writestr("%s@%s/greet.go" % (mod, ver), src)
EOF

	mkdir -p "$2/web"
	cat >"$2/go.mod" <<'EOF'
module wf.test/app

go 1.19

require example.com/greet v1.0.0
EOF
	cat >"$2/main.go" <<'EOF'
package main

import (
	"fmt"

	"example.com/greet"
	"wf.test/app/web"
)

func main() { fmt.Println(greet.Hello("sandbox"), web.Path) }
EOF
	cat >"$2/web/web.go" <<'EOF'
package web

import (
	"fmt"
	"net/http"

	"example.com/greet"
)

const Path = "/hello"

func Handler(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, greet.Hello(r.URL.Query().Get("who"))) }
EOF
	cat >"$2/web/web_test.go" <<'EOF'
package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A server on the sandbox's own loopback, as most Go HTTP tests do.
func TestServe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(Handler))
	defer srv.Close()
	res, err := http.Get(srv.URL + Path + "?who=test")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if string(body) != "hello, test" {
		t.Fatalf("got %q", body)
	}
}
EOF
}

# pip_index ROOT: a PEP 503 index under ROOT/simple with two wheels, wfpkg 1.0
# requiring wfdep 1.0 (t_wf_pip.sh, t_learn_tools.sh)
pip_index() {
	python3 - "$1" <<'EOF'
import base64, hashlib, os, sys, zipfile
root = sys.argv[1]
def b64(d): return base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
def wheel(name, ver, code, requires=()):
    di = "%s-%s.dist-info" % (name, ver)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver)
    meta += "".join("Requires-Dist: %s\n" % r for r in requires)
    files = {"%s/__init__.py" % name: code, di + "/METADATA": meta,
             di + "/WHEEL": "Wheel-Version: 1.0\nGenerator: t_wf_pip\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join("%s,sha256=%s,%d\n" % (p, b64(c.encode()), len(c.encode())) for p, c in files.items())
    files[di + "/RECORD"] = record + di + "/RECORD,,\n"
    fn = "%s-%s-py3-none-any.whl" % (name, ver)
    os.makedirs(os.path.join(root, "files"), exist_ok=True)
    with zipfile.ZipFile(os.path.join(root, "files", fn), "w") as z:
        for p, c in files.items():
            z.writestr(p, c)
    digest = hashlib.sha256(open(os.path.join(root, "files", fn), "rb").read()).hexdigest()
    d = os.path.join(root, "simple", name)
    os.makedirs(d)
    open(os.path.join(d, "index.html"), "w").write(
        '<!DOCTYPE html><html><body><a href="../../files/%s#sha256=%s">%s</a></body></html>\n' % (fn, digest, fn))
wheel("wfdep", "1.0", 'VALUE = "wfdep 1.0"\n')
wheel("wfpkg", "1.0", 'from wfdep import VALUE as DEP\nVALUE = "wfpkg 1.0 + " + DEP\n', ["wfdep>=1.0"])
open(os.path.join(root, "simple", "index.html"), "w").write(
    '<!DOCTYPE html><html><body><a href="wfdep/">wfdep</a><a href="wfpkg/">wfpkg</a></body></html>\n')
EOF
}

# cargo_index ROOT URL: the crate wfcrate 1.0.0 under ROOT/dl, its index line under
# ROOT/sparse and ROOT/gitsrc, each with config.json naming URL/dl (t_wf_cargo.sh,
# t_learn_tools.sh)
cargo_index() {
	python3 - "$1" "$2" <<'EOF'
import hashlib, io, json, os, sys, tarfile
root, url = sys.argv[1:]
def add(t, name, text):
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 1700000000
    t.addfile(info, io.BytesIO(data))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as t:
    add(t, "wfcrate-1.0.0/Cargo.toml",
        '[package]\nname = "wfcrate"\nversion = "1.0.0"\nedition = "2018"\n')
    add(t, "wfcrate-1.0.0/src/lib.rs",
        'pub fn hello() -> &\'static str { "hello from wfcrate" }\n')
crate = buf.getvalue()
dl = os.path.join(root, "dl", "wfcrate", "1.0.0")
os.makedirs(dl)
open(os.path.join(dl, "download"), "wb").write(crate)
line = json.dumps({"name": "wfcrate", "vers": "1.0.0", "deps": [], "features": {},
                   "cksum": hashlib.sha256(crate).hexdigest(), "yanked": False})
for kind in ("gitsrc", "sparse"):
    d = os.path.join(root, kind, "wf", "cr")
    os.makedirs(d)
    open(os.path.join(d, "wfcrate"), "w").write(line + "\n")
    open(os.path.join(root, kind, "config.json"), "w").write(json.dumps({"dl": url + "/dl"}))
EOF
}

# need TOOL...: 0 when each is on PATH, else prints nothing and returns 1 (the caller skips)
need() {
	local t
	for t in "$@"; do command -v "$t" >/dev/null || {
		MISSING=$t
		return 1
	}; done
}
