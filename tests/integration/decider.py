"""A harness's decider for t_decider.sh, run by halo-run OUTSIDE the sandbox (through
/bin/sh -c). Reads one question per line on stdin, logs it to LOG, and answers as MODE
says:

  allow | deny        {"id":ID,"decision":...}
  session             allow, with "remember":"session"
  garbage             a line that is not JSON
  huge                a 10000-byte line, then nothing
  wrongid             an answer for ID+1000
  hang                never answers (keeps reading)
  exit                exits before the first question
  dupkey              {"id":ID,"decision":"deny","decision":"allow"}
"""
import json
import sys

mode, log = sys.argv[1], sys.argv[2]
if mode == "exit":
    sys.exit(0)
for line in sys.stdin:
    with open(log, "a") as f:
        f.write(line)
    q = json.loads(line)
    out = {
        "allow": lambda: json.dumps({"id": q["id"], "decision": "allow"}),
        "deny": lambda: json.dumps({"id": q["id"], "decision": "deny", "remember": "once"}),
        "session": lambda: json.dumps({"id": q["id"], "decision": "allow", "remember": "session"}),
        "garbage": lambda: "sure, go ahead",
        "huge": lambda: "x" * 10000,
        "wrongid": lambda: json.dumps({"id": q["id"] + 1000, "decision": "allow"}),
        "hang": lambda: None,
        "dupkey": lambda: '{"id":%d,"decision":"deny","decision":"allow"}' % q["id"],
    }[mode]()
    if out is not None:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
