/* --events in a session: the session's supervisor holds the file for every call (the
 * calls share its proxy, whose egress and decider records go there too) and writes
 * each call's start and exit, numbered by "call", from what the control protocol
 * tells it: the command line at run, the wall-clock limit the call enforces (its kill
 * says the limit was hit), and the spawner's exit or failure. The exit record says
 * what the call itself returned (session_call.c's outcome()), so that a harness reads
 * the same status in the file as from the call. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "events/events.h"
#include "session/session_int.h"

void runner_session_ev_start(struct runner_events *ev, const runner_launch *l,
			     const struct runner_session_call *c, char *const *argv)
{
	if (ev->fd < 0)
		return;
	ev->call = c->id;
	runner_events_start(ev, l->policy, l->policy_files, l->n_policy_files, l->workspace, argv);
	ev->call = 0;
}

/* As the call maps it: its own kill at the wall-clock limit wins over how the killed
 * command ended. */
static struct halo_outcome call_outcome(const struct runner_session_call *c,
					const struct session_msg *m, char *why, size_t n)
{
	if (c->timed_out)
		return halo_outcome_of(HALO_OUTCOME_TIMEOUT, 0);
	if (!m) {
		snprintf(why, n, "the session ended during the call; its command was killed");
		return halo_outcome_of(HALO_OUTCOME_SIGNALED, SIGKILL);
	}
	if (m->verb == SESSION_EXIT)
		return halo_outcome_wait((int)m->status);
	if (m->kind == SESSION_FAIL_EXEC)
		return halo_outcome_exec((int)m->err);
	snprintf(why, n, "the call could not start: %s%s%s", m->msg ? m->msg : "",
		 m->err ? ": " : "", m->err ? strerror((int)m->err) : "");
	return halo_outcome_of(HALO_OUTCOME_SETUP, 0);
}

void runner_session_ev_exit(struct runner_events *ev, const runner_launch *l,
			    const struct runner_session_call *c, const struct session_msg *m,
			    bool call_gone)
{
	struct halo_run_facts facts = {0};
	struct rlimits_set r = l->limits;
	struct halo_outcome out;
	uint64_t t0 = ev->t0_ms;
	char why[4200] = "";

	if (ev->fd < 0)
		return;
	out = call_outcome(c, m, why, sizeof(why));
	if (call_gone && !why[0])
		snprintf(why, sizeof(why), "the call went away; its command was killed");
	facts.timed_out = c->timed_out;
	r.wall_seconds = c->wall;
	/* The SIGKILL was ours (the call went, the session ended): not the CPU limit's,
	 * which events.c infers from a SIGKILL when one is set. */
	if (call_gone || !m)
		r.cpu_seconds = RLIMITS_UNSET;
	ev->call = c->id;
	ev->t0_ms = c->t0_ms;
	runner_events_finish(ev, &r, out, &facts, halo_exit_code(out), why);
	ev->t0_ms = t0;
	ev->call = 0;
}

/* The session's last record, and the file's name checked as a run checks it at exit
 * (loop.c): said in the session's log when it no longer leads to the file written. */
void runner_session_ev_end(struct runner_events *ev, const char *reason, long long calls)
{
	struct stat now;

	if (ev->fd < 0)
		return;
	runner_events_session_end(ev, reason, calls);
	if (ev->path && (lstat(ev->path, &now) < 0 || now.st_dev != ev->st.st_dev ||
			 now.st_ino != ev->st.st_ino))
		fprintf(stderr,
			"halo-run: --events %s no longer names the events file the session "
			"wrote (moved or replaced); do not trust what is there now\n",
			ev->path);
	runner_events_close(ev);
}
