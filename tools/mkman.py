#!/usr/bin/env python3
"""Man pages from the user docs (issue 28): no second copy to keep in sync.

  tools/mkman.py VERSION README.md docs/policy.md OUTDIR

writes OUTDIR/halo-run.1 (README: what it is, usage, options, examples, exit codes) and
OUTDIR/halo-run-policy.5 (docs/policy.md, whole). A converter for the markdown subset
the docs use: headings, paragraphs, fenced blocks, pipe tables, `-` lists, `code`,
**bold**, *italic* and [links](target).
"""
import re, sys

DATE = "2026-12-01"


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return s


def inline(s):
    s = re.sub(r"\[([^\]]*)\]\(([^)]*)\)", lambda m: m.group(1) if m.group(1) == m.group(2)
               else "%s (%s)" % (m.group(1), m.group(2)), s)
    parts = re.split(r"(`[^`]*`)", s)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) >= 2:
            out.append("\\fB" + esc(p[1:-1]) + "\\fR")
            continue
        p = esc(p)
        p = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", p)
        p = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", p)
        out.append(p)
    return "".join(out)


def line(s, keep=False):
    """A roff text line: one starting with . or ' would be a request."""
    s = s.rstrip() if keep else s.strip()
    return "\\&" + s if s[:1] in (".", "'") else s


def cells(row):
    row = row.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]


def body(md, level1=".SH", level2=".SS"):
    """roff for markdown lines (the file's own # title is left to the caller)."""
    out, i, para = [], 0, False
    lines = md.split("\n")
    while i < len(lines):
        l = lines[i]
        m = re.match(r"^(\s*)```", l)
        if m:
            out += [".PP", ".RS 2", ".nf"]
            i += 1
            while i < len(lines) and not re.match(r"^\s*```", lines[i]):
                out.append(line(esc(lines[i][len(m.group(1)):]), True) if lines[i].strip() else "")
                i += 1
            out += [".fi", ".RE"]
            i += 1
            para = False
            continue
        h = re.match(r"^(#{2,3}) (.*)$", l)
        if h:
            t = inline(h.group(2)).replace('"', "")
            out.append(level1 + ' "' + t.upper() + '"' if len(h.group(1)) == 2 else level2 + ' "' + t + '"')
            para = False
        elif l.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                if not re.match(r"^\|[\s|:-]+\|?$", lines[i]):
                    rows.append(cells(lines[i]))
                i += 1
            head, rows = rows[0], rows[1:]
            for r in rows:
                out += [".TP", inline(r[0])]
                rest = ["%s: %s" % (head[k], r[k]) if len(r) > 2 else r[k] for k in range(1, len(r))]
                out.append(line(inline("; ".join(rest))))
            para = False
            continue
        elif re.match(r"^\s*- ", l):
            out += [".IP \\(bu 2", line(inline(re.sub(r"^\s*- ", "", l)))]
            para = True
        elif l.strip() == "":
            para = False
        else:
            if not para:
                out.append(".PP")
                para = True
            out.append(line(inline(l)))
        i += 1
    return out


def section(md, title):
    """The text of `## title` up to the next heading of level 2."""
    m = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", md, re.S | re.M)
    if not m:
        sys.exit("mkman: no section '## %s'" % title)
    return m.group(1)


def fenced(md):
    m = re.search(r"^```[a-z]*\n(.*?)^```", md, re.S | re.M)
    return m.group(1)


def page1(version, readme):
    usage = section(readme, "Usage")
    synopsis, rest = fenced(usage), usage.split("```", 2)[2].split("\n", 1)[1]
    out = ['.TH HALO\\-RUN 1 "%s" "halo-run %s" "User Commands"' % (DATE, version), ".SH NAME",
           "halo\\-run, halo\\-sh, halo\\-bash \\- run a command in a sandbox built from one policy",
           ".SH SYNOPSIS", ".nf"]
    out += [line(esc(l), True) for l in synopsis.rstrip("\n").split("\n")]
    out += [".fi", ".SH DESCRIPTION"]
    intro = readme.split("\n## ", 1)[0]
    summary = [p for p in intro.split("\n\n") if p.startswith("`halo-run -- <cmd>`")]
    out += body("\n\n".join(summary))
    out += body(section(readme, "Who it is for"))
    out += [".SH OPTIONS"] + body(rest.replace("Examples:", "").split("```")[0])
    out += [".SH EXAMPLES"] + body("```\n" + fenced(rest) + "```\n")
    out += [".SH \"FIRST STEPS\""] + body(section(readme, "The five things people do first"))
    out += [".SH \"EXIT STATUS\""] + body(section(readme, "Exit codes"))
    out += [".SH FILES"] + body(section(readme, "Install"))
    out += [".SH \"SEE ALSO\"", "\\fBhalo\\-run\\-policy\\fR(5); the topic pages under",
            "\\fI/usr/share/doc/halo\\-run/docs/\\fR:"]
    out += body(section(readme, "Where to read more"))
    return out


def page5(version, policy):
    title, text = policy.split("\n", 1)
    out = ['.TH HALO\\-RUN\\-POLICY 5 "%s" "halo-run %s" "File Formats"' % (DATE, version), ".SH NAME",
           "halo\\-run\\-policy \\- the policy file of halo\\-run (JSON or YAML)", ".SH DESCRIPTION"]
    out += body(text)
    out += [".SH \"SEE ALSO\"", "\\fBhalo\\-run\\fR(1)"]
    return out


def main():
    version, readme, policy, outdir = sys.argv[1:5]
    for name, lines in (("halo-run.1", page1(version, open(readme).read())),
                        ("halo-run-policy.5", page5(version, open(policy).read()))):
        with open(outdir + "/" + name, "w") as f:
            f.write("\n".join(lines) + "\n")


main()
