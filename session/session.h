/* session/ — named sessions: a sandbox that outlives its first call, joined by the
 * later ones (session.c: the call, list and stop; session_call.c: a call; session_sup.c:
 * the supervisor in the daemon the first call forks; session_cmd.c: the subcommand). */
#ifndef HALO_SESSION_H
#define HALO_SESSION_H

#include <stddef.h>

#include "launch/launch.h"
#include "opts/opts.h"

/* Sessions (session.c: the call, list and stop; session_sup.c: the supervisor that
 * outlives the first call). runner_session_run replaces the launch of a run with
 * --session: it joins the named session, starting it first when there is none. */
int runner_cmd_session(const struct runner_opts *o);
int runner_session_run(const struct runner_opts *o, const runner_launch *l);
/* A call's connection to its session, made first thing (before the policy is loaded):
 * the supervisor starts its walk for protected files on it (session/sup_walk.c) while
 * the call builds the rest. Nothing when this cannot be a session's call or none runs
 * (runner_session_run then starts one, or says why not). */
void runner_session_early(const struct runner_opts *o);
/* The control directory, made if missing (every launch hides it inside: a session
 * started later keeps its socket there), or NULL when it is not ours. */
const char *runner_session_dir_made(char *out, size_t n);
/* session_cmd.c: its name alone, nothing made ($XDG_RUNTIME_DIR/halo-run where that is
 * the user's directory, else /tmp/halo-run-UID): `halo-run hook` refuses a harness's
 * tools there as every launch hides it. 0 or -ENAMETOOLONG. */
int runner_session_place_name(char *out, size_t n);

/* session_cmd.c: stop the session NAME if it runs, saying nothing on stdout. 0 when it
 * is gone (or never was), else 1 after a line on stderr. */
int runner_session_stop_quiet(const char *name);

#endif
