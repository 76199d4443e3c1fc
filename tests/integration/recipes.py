"""Agent harnesses' shell invocations, reproduced from their public source, for
t_recipes.sh. Each builds the exact argv (and, where the harness goes through an outer
shell, the exact string it hands that shell) that the harness spawns for one command,
with SHELL_PATH standing for the shell the recipe puts in front (halo-bash, or plain
bash for the reference run).

  python3 recipes.py HARNESS SHELL_PATH CMD_FILE    runs it; stdout/stderr/status pass

Sources (checked 2026-12):
- Claude Code: CLAUDE_CODE_SHELL_PREFIX. The Bash tool builds
  `source SNAPSHOT && eval QUOTED < /dev/null && pwd -P >| CWDFILE` (QUOTED =
  quote([cmd])), then formatShellPrefixCommand(prefix, that): the prefix is split at
  its first " -" after the last path separator; `quote([exec]) ARGS quote([string])`,
  or `quote([prefix]) quote([string])` without flags; spawned as
  [CLAUDE_CODE_SHELL or bash, "-c", string]. quote is the shell-quote package's.
  Hook commands get the same prefix and run with /bin/sh -c.
- Codex: Shell.derive_exec_args: [shell, "-lc", cmd]. The shell is the passwd entry's (only zsh/bash/sh kinds), so Codex itself is wrapped:
  halo-run -- codex, and its commands run as /bin/bash -lc inside.
- Gemini CLI: spawn("bash", ["-c", "shopt -u promptvars nullglob extglob nocaseglob
  dotglob; { CMD; }; __code=$?; pgrep -g 0 >TMP 2>&1; exit $__code;"]) (the shopt
  prefix in recent releases); bash is not configurable: wrap the harness.
- OpenCode: Shell.acceptable() is $SHELL (unless fish or nu); the bash tool spawns
  the command with {shell: that}: [SHELL, "-c", cmd].
- Cursor: the CLI agent's shell invocation is not documented: the generic
  [$SHELL, "-c", cmd] form, and the harness wrapped.
"""
import os
import re
import subprocess
import sys


def sq_quote_181(s):
    """shell-quote 1.8.1's quote() for one string (the rules Claude Code bundles)."""
    if s == "":
        return "''"
    if re.search(r"[\"\s]", s) and "'" not in s:
        return "'" + re.sub(r"(['\\])", r"\\\1", s) + "'"
    if re.search(r"[\"'\s]", s):
        return '"' + re.sub(r"([\"\\$`!])", r"\\\1", s) + '"'
    return re.sub(r"([A-Za-z]:)?([#!\"$&'()*,:;<=>?@\[\\\]^`{|}])", r"\1\\\2", s)


def sq_quote_112(s):
    """shell-quote 1.12's quote() for one string (current releases)."""
    if s == "":
        return "''"
    if "'" in s and "!" in s:
        return "'" + s.replace("'", "'\"'\"'") + "'"
    if re.search(r"[\"\s\\]", s) and "'" not in s:
        return "'" + s + "'"
    if re.search(r"[\"'\s]", s):
        return '"' + re.sub(r"([\"\\$`])", r"\\\1", s) + '"'
    return re.sub(r"([A-Za-z]:)?([#!\"$&'()*,:;<=>?@\[\\\]^`{|}~])", r"\1\\\2", s)


QUOTE = sq_quote_112 if os.environ.get("SHELL_QUOTE") == "1.12" else sq_quote_181


def format_shell_prefix(prefix, command):
    """Claude Code's formatShellPrefixCommand (the first-' -' split, current)."""
    last_sep = max(prefix.rfind("/"), prefix.rfind("\\"))
    at = prefix.find(" -")
    while 0 < at < last_sep:
        at = prefix.find(" -", at + 2)
    if at > 0:
        return "%s %s %s" % (QUOTE(prefix[:at]), prefix[at + 1:], QUOTE(command))
    return "%s %s" % (QUOTE(prefix), QUOTE(command))


def claude(shell, cmd, tmp):
    snap = os.path.join(tmp, "snapshot-bash.sh")
    with open(snap, "w") as f:
        f.write("snapfn() { echo from-snapshot; }\n")
    cwdfile = os.path.join(tmp, "claude-cwd")
    string = " && ".join(["source %s" % QUOTE(snap),
                          "eval %s < /dev/null" % QUOTE(cmd),
                          "pwd -P >| %s" % QUOTE(cwdfile)])
    prefix = os.environ.get("PREFIX_OVERRIDE", shell + " -c")
    return ["/bin/bash", "-c", format_shell_prefix(prefix, string)]


def claude_hook(shell, cmd, tmp):
    return ["/bin/sh", "-c", format_shell_prefix(shell + " -c", cmd)]


def codex(shell, cmd, tmp):
    return [shell, "-lc", cmd]


def gemini(shell, cmd, tmp):
    c = cmd.strip()
    if not c.endswith("&"):
        c += ";"
    pg = os.path.join(tmp, "shell_pgrep.tmp")
    wrapped = ("shopt -u promptvars nullglob extglob nocaseglob dotglob; "
               "{ %s }; __code=$?; pgrep -g 0 >%s 2>&1; exit $__code;" % (c, pg))
    return [shell, "-c", wrapped]


def dollar_shell_c(shell, cmd, tmp):  # OpenCode, Cursor: [$SHELL, "-c", cmd]
    return [shell, "-c", cmd]


HARNESSES = {
    "claude-code": claude,
    "claude-code-hook": claude_hook,
    "codex": codex,
    "gemini": gemini,
    "opencode": dollar_shell_c,
    "cursor": dollar_shell_c,
}


def main():
    if sys.argv[1] == "quote":  # for the cross-check against the npm package
        for line in sys.stdin.read().split("\0"):
            if line:
                sys.stdout.write(QUOTE(line) + "\0")
        return 0
    harness, shell, cmd_file = sys.argv[1:4]
    with open(cmd_file) as f:
        cmd = f.read()
    tmp = os.environ.get("TMPDIR", "/tmp")
    argv = HARNESSES[harness](shell, cmd, tmp)
    if os.environ.get("RECIPE_SHOW"):
        sys.stderr.write(repr(argv) + "\n")
    return subprocess.run(argv, stdin=subprocess.DEVNULL, timeout=60).returncode


if __name__ == "__main__":
    sys.exit(main())
