#!/bin/bash
# Workflow: pip under halo-run. `python3 -m venv` in the workspace, then `pip install
# --index-url http://pypi.test:PORT/simple/ --trusted-host pypi.test wfpkg` (plain
# http) from a static PEP 503 index served on the host's loopback. wfpkg (which
# requires wfdep) is a wheel this test writes by hand (zipfile: METADATA, WHEEL,
# RECORD; no setuptools, no network). The default policy plus only pypi.test allowed.
# The host's ~/.cache/pip is unchanged afterwards.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
. "$IT/wf_lib.sh"

if ! need python3 || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
	skip "pip workflow" "python3 with venv and ensurepip is not installed (python3-venv)"
	finish
	exit
fi
start_registry pypi 200
P=$(wait_port pypi)
wf_policy pip.yaml pypi.test

python3 - "$W/pypi.root" <<'EOF'
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
chmod -R a+rX "$W"
chmod -R a+rwX "$WS"
seed_caches "$HOME/.cache/pip"

row "python3 -m venv in the workspace" pip.yaml venv.log "^venv ok$" \
	sh -c 'timeout 60 python3 -m venv venv && echo venv ok'
row "pip install from the loopback PEP 503 index (with a dependency)" pip.yaml pip.log \
	"^wfpkg 1.0 \+ wfdep 1.0$" sh -c "timeout 60 venv/bin/pip install -q --disable-pip-version-check \
	--index-url http://pypi.test:$P/simple/ --trusted-host pypi.test wfpkg && venv/bin/python -c 'import wfpkg; print(wfpkg.VALUE)'"
caches_unchanged "pip"
finish
