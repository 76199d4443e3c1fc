#!/usr/bin/env python3
"""Extract what the docs claim, for t_docs.sh: README.md and docs/*.md.

Prints one tab-separated record per line:
  CMD    FILE:LINE  COMMAND        a `halo-run ...` command line of a sh/bash/console block
                                   (after the block's earlier `mkdir` lines, if any); in
                                   `make all && ./build/halo-run ...`, the halo-run part
  POLICY FILE:LINE  EXT INVALID B64 NAME  a YAML/JSON block whose top level has a policy
                                   key (INVALID=1 when its first line is `# invalid`; NAME
                                   the file its first line names, `# ci/halo.yaml: ...`, or -)
  OTHER  FILE:LINE  LANG           a YAML/JSON block that is not a policy; the halo-run
                                   lines of its CI steps (`run:`, `script:`) are CMD records
  LINK   FILE:LINE  TARGET STATE   a relative link; STATE is ok or missing
A block is not a policy when its fence says so: ```json not-policy (harness settings
with a top-level "sandbox" or "env" key, for example).
"""
import base64, json, os, re, sys

POLICY_KEYS = {"sandbox", "egress", "gateway", "limits", "env", "permissions"}
SHELLS = {"sh", "bash", "console", "shell"}
CMD_RE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:sudo\s+)?halo-run(?:\s|$)")
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def load(text, ext):
    try:
        if ext == "json":
            return json.loads(text)
        import yaml
        return yaml.safe_load(text)
    except Exception:
        return None


def ci_scripts(doc):
    """The shell text of a CI file: GitHub's `run:`, GitLab's `script:` lists."""
    if isinstance(doc, list):
        for v in doc:
            yield from ci_scripts(v)
    elif isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("run", "script", "before_script", "after_script"):
                for t in v if isinstance(v, list) else [v]:
                    if isinstance(t, str):
                        yield t
            else:
                yield from ci_scripts(v)


def commands(block, lang):
    """(offset, line) of each logical command line, continuations joined."""
    out, cur, start = [], "", 0
    for i, line in enumerate(block):
        if lang == "console":
            if not cur:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
        if not cur:
            start = i
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        out.append((start, cur.strip()))
        cur = ""
    return out


def scan(path, rel):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(.*)$", lines[i])
        if not m:
            for t in LINK_RE.findall(lines[i]):
                if re.match(r"^[a-z]+:", t) or t.startswith("#"):
                    continue
                target = t.split("#")[0]
                full = os.path.normpath(os.path.join(os.path.dirname(path), target))
                state = "ok" if os.path.exists(full) else "missing"
                print("LINK\t%s:%d\t%s\t%s" % (rel, i + 1, t, state))
            i += 1
            continue
        indent, info = m.group(1), m.group(2).split()
        lang = info[0] if info else ""
        j = i + 1
        body = []
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        if lang in SHELLS:
            setup = []  # `mkdir` lines of the block run before each of its halo-run lines
            for off, cmd in commands(body, lang):
                if cmd.startswith("mkdir "):
                    setup.append(cmd)
                k = cmd.find("./build/halo-run ")  # `make ... && ./build/halo-run ...`: its run
                if k >= 0:
                    cmd = cmd[k + len("./build/"):]
                if CMD_RE.match(cmd):
                    cmd = "; ".join(setup + [cmd]) if setup else cmd
                    cmd = re.sub(r"\s*&\s*$", "", cmd)  # a background job: run in the foreground
                    print("CMD\t%s:%d\t%s" % (rel, i + 2 + off, cmd))
        elif lang in ("yaml", "json"):
            text = "\n".join(body) + "\n"
            doc = load(text, lang)
            if "not-policy" not in info and isinstance(doc, dict) and POLICY_KEYS & set(doc):
                invalid = "1" if body and body[0].strip() == "# invalid" else "0"
                b64 = base64.b64encode(text.encode()).decode()
                m = re.match(r"^# ([\w./-]+\.(?:yaml|yml|json))\b", body[0]) if body else None
                print("POLICY\t%s:%d\t%s\t%s\t%s\t%s" % (rel, i + 1, lang, invalid, b64,
                                                        os.path.basename(m.group(1)) if m else "-"))
            else:
                print("OTHER\t%s:%d\t%s" % (rel, i + 1, lang))
                for script in ci_scripts(doc):  # a CI file's steps: their halo-run lines
                    for off, cmd in commands(script.split("\n"), "sh"):
                        if CMD_RE.match(cmd):
                            print("CMD\t%s:%d\t%s" % (rel, i + 1, cmd))
        i = j + 1


def main():
    src = sys.argv[1]
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    for rel in files:
        scan(os.path.join(src, rel), rel)


main()
