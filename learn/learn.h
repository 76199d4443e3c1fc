/* learn/ — `halo-run learn`: what a run used that its policy did not name, and the
 * policy that names it.
 *
 * A run in learn mode records (record.c) every host the proxy allowed only because
 * the default would have denied it (policy_decision_learn), what was refused anyway
 * (a rule's deny, an address outside allowPrivate) and the writes the broker saw
 * refused. propose.c turns a record into the minimal additions to the input policy
 * (exact names; a preset when every learned name of a preset's is within it; "*.x"
 * only when asked; host:port for a port other than 80 and 443; writable roots that
 * the policy's own validation accepts), and the list of what learning will not
 * propose. emit.c writes the input policy plus the additions as YAML, each addition
 * with a comment naming what used it, and validates the text through the policy
 * loader before anyone writes it. Pure: no syscalls; the runner feeds and writes. */
#ifndef HALO_LEARN_H
#define HALO_LEARN_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* Bounds: a run that does more is cut, and the output's header says how much. */
#define LEARN_MAX_HOSTS	   4096
#define LEARN_MAX_WRITES   256
#define LEARN_MAX_COMMANDS 64

enum learn_host_kind {
	LEARN_HOST_ALLOWED, /* allowed by learning (the default would have denied it) */
	LEARN_HOST_PRIVATE, /* refused after resolution: an address allowPrivate lacks */
	LEARN_HOST_DENIED,  /* refused by a rule: an explicit deny, the decider */
};

struct learn_host {
	enum learn_host_kind kind;
	char host[256]; /* canonical (Decide parsed it) */
	unsigned port;
	char proto[16];
	char addr[48]; /* PRIVATE: the address refused, and its class */
	char cls[24];
	char rule[192]; /* DENIED: the rule that denied it */
	unsigned long long conns;
};

/* A write the sandbox refused (the broker performed the call and the kernel said no:
 * a read-only mount, Landlock, a protected path), or that the guard refused. */
struct learn_write {
	char path[4096]; /* absolute, as the broker saw it */
	int err;	 /* EROFS, EACCES, EPERM */
	bool guard;	 /* refused by the persistence guard or a git rule, not the kernel */
	unsigned long long count;
};

struct learn_record {
	struct learn_host *hosts;
	size_t n_hosts, cap_hosts;
	struct learn_write *writes;
	size_t n_writes, cap_writes;
	char *commands[LEARN_MAX_COMMANDS]; /* each call's command line, as text */
	size_t n_commands;
	unsigned long long dropped_hosts, dropped_writes, dropped_commands;
	/* What the run could observe: false when a channel was not there (no broker: the
	 * writes; said in the output's header). */
	bool writes_observed;
	bool writes_cut; /* the sandbox sent fewer writes than it saw (its bound) */
};

void learn_record_init(struct learn_record *r);
void learn_record_free(struct learn_record *r);
/* One connection (or refusal) of host:port; the same (kind, host, port, proto) counts
 * up. 0, or -ENOMEM / -E2BIG (the record is full: counted in dropped_hosts). */
int learn_record_host(struct learn_record *r, enum learn_host_kind k, const char *host,
		      unsigned port, const char *proto, const char *addr, const char *cls,
		      const char *rule);
int learn_record_write(struct learn_record *r, const char *path, int err, bool guard);
/* The command line of a call (argv joined by spaces, each word quoted when needed). */
int learn_record_command(struct learn_record *r, char *const *argv);
/* The broker's notes as the sandbox sends them (NUL-terminated records: "B" the
 * broker ran, "W ERRNO PATH" or "G ERRNO PATH", "T" when it cut the list), len bytes. Malformed
 * records are skipped. Returns the records taken. */
size_t learn_record_writes_parse(struct learn_record *r, const char *buf, size_t len);

/* One proposed (or refused) entry, with what used it. */
struct learn_item {
	char *value;
	char *comment;
};
struct learn_items {
	struct learn_item *v;
	size_t n;
};

struct learn_plan {
	struct learn_items domains;    /* egress.allowedDomains additions */
	struct learn_items presets;    /* egress.presets additions */
	struct learn_items host_ports; /* egress.hostPorts additions ("4873") */
	struct learn_items roots;      /* sandbox.writableRoots additions */
	struct learn_items env_pass;   /* env.pass additions */
	struct learn_items refused;    /* what learning will not propose, and why */
	struct learn_items notes;      /* what the run could not show */
};

struct learn_opts {
	bool wildcards; /* --wildcards: "*.x" for two names or more under x */
	/* Would root be accepted as a sandbox.writableRoots entry of the input policy? 0,
	 * or -EINVAL with the validator's reason in why. NULL: no root is proposed. */
	int (*root_check)(void *ctx, const char *root, char *why, size_t n);
	void *ctx;
	/* The Public Suffix List's text (Debian's publicsuffix package): --wildcards never
	 * proposes "*.x" over a public suffix. NULL: no list, so no wildcard is proposed. */
	const char *suffixes;
};

/* Is name a public suffix by list (the Public Suffix List's format: one rule a line,
 * "*.x" wildcards, "!x" exceptions, "//" comments), compared case-insensitively? */
bool learn_public_suffix(const char *list, const char *name);
/* Is name a public suffix, or does any rule of the list lie below it (s3.amazonaws.com
 * below amazonaws.com)? A wildcard over name would cover names anyone can register. */
bool learn_suffix_within(const char *list, const char *name);

/* The minimal additions to p that the record asks for. 0 or -ENOMEM. */
int learn_propose(const struct halo_policy *p, const struct learn_record *r,
		  const struct learn_opts *o, struct learn_plan *out);
void learn_plan_free(struct learn_plan *pl);

/* The preset that holds host (exact entries and "*.x" alike), or NULL. */
const struct policy_preset *learn_preset_of(const char *host);

/* The YAML text: a header (what the run showed and what it did not), then p's fields
 * (the effective policy, policy_to_json's model part) with the plan's additions in
 * their lists, each with its comment. 0 or -ENOMEM / -EINVAL; *out is heap (free). */
int learn_emit(const struct halo_policy *p, const struct learn_record *r,
	       const struct learn_plan *pl, char **out, size_t *len);
/* The same with no record and no plan: p alone, in the same form (the diff's base). */
int learn_emit_base(const struct halo_policy *p, char **out, size_t *len);

/* A scalar as a YAML double-quoted string ("..." with \" \\ and \xNN for every
 * control byte and DEL), into out; false when it does not fit. */
bool learn_yaml_quote(const char *s, char *out, size_t n);
/* Text for a comment: one line, printable (policy_printable). */
const char *learn_comment_text(const char *s, char *out, size_t n);

/* Load text as a whole policy (the credential floor first, as every load) and
 * finalize it: the check every output passes before it is written. 0, or -EINVAL
 * with the reasons in d (policy_diags_free). */
int learn_validate(const char *yaml, size_t len, const struct policy_ctx *ctx,
		   struct policy_diags *d);

/* Lines of a minimal diff of a against b ("- line", "+ line"), for stderr. Heap. */
char *learn_diff(const char *a, const char *b);

#endif
