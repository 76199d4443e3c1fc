/* --decider COMMAND: the harness's program, asked about hosts no rule of the policy
 * matched. Protocol, one JSON object per line:
 *   halo-run -> decider (its stdin):  {"id":7,"host":"h.example","port":443,
 *                                      "protocol":"connect","session":""}
 *   decider -> halo-run (its stdout): {"id":7,"decision":"allow"|"deny",
 *                                      "remember":"once"|"session"}   (remember optional)
 * An answer that is not exactly that (see runner_decider_parse_answer), a line over
 * RUNNER_DECIDER_MAX_LINE bytes, an id with no question waiting, no answer within the
 * timeout, or a decider that exits: the policy's default, with one line on stderr for
 * each kind of trouble. */
#ifndef HALO_RUNNER_DECIDER_H
#define HALO_RUNNER_DECIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUNNER_DECIDER_MAX_LINE 4096
/* Ids are JSON numbers: kept below 2^53 so that every decider's JSON reads them exactly. */
#define RUNNER_DECIDER_MAX_ID ((uint64_t)1 << 53)

struct runner_decider_answer {
	uint64_t id;
	bool allow;
	bool remember_session; /* "remember":"session": the same answer for host:port until
				* the run (or session) ends */
};

/* Parse one answer line (without its newline). 0, or -EINVAL with the reason in why:
 * not a JSON object, an id that is not an integer in 1..2^53-1, a decision other than
 * "allow" or "deny", a remember other than "once" or "session", a key twice, NUL
 * bytes, trailing bytes. Unknown keys are ignored (a newer decider may say more). */
int runner_decider_parse_answer(const char *line, size_t len, struct runner_decider_answer *a,
				char *why, size_t whylen);

/* decider_keeper.c. Start `/bin/sh -c command` as the decider, its stdin and stdout on
 * in_r and out_w (the caller's ends stay the caller's). The pid to end it by, or -errno. */
#include <sys/types.h>
pid_t runner_decider_fork(const char *command, int in_r, int out_w);
/* Its stdout at EOF (read, non-blocking): it exited or closed its stdout. */
bool runner_decider_eof(int out_fd);
/* End it, and everything it started: a decider whose stdout reaches EOF within grace_ms
 * (its stdin already closed) ended by itself; then what is left is killed. */
void runner_decider_end(pid_t pid, int out_fd, unsigned grace_ms);

#endif
