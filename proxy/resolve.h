/* The proxy's resolver: getaddrinfo on a small pool of threads, completions reported
 * to the event loop through an eventfd (Linux) or a pipe (portable). Internal to
 * proxy/; the loop owns every callback.
 *
 * Lookups are absolute: no search-domain expansion. On glibc each resolver thread
 * clears RES_DNSRCH and RES_DEFNAMES in its own (thread-local) resolver state before
 * every lookup; a trailing dot would do the same for DNS, but glibc 2.36's "files"
 * backend then no longer matches /etc/hosts entries ("origin.test." does not match
 * "origin.test"), which breaks hosts-file overrides. Elsewhere a trailing dot is
 * appended. Flags: none of AI_ADDRCONFIG (every answer is returned, so every answer is
 * checked, and the result does not depend on which interfaces the host has up),
 * AI_CANONNAME or AI_IDN (non-ASCII names never reach here: Decide refuses them). */
#ifndef HALO_PROXY_RESOLVE_H
#define HALO_PROXY_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/poller.h"

#define PROXY_RESOLVE_MAX_ADDRS 32 /* answers beyond are dropped: never checked, never dialled */
#define PROXY_RESOLVE_THREADS	4

struct proxy_addr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
};

struct proxy_resolver;
struct proxy_resolve_job;

/* err: 0 (n >= 1 addresses, duplicates removed, resolver order kept), -ENOENT (no
 * such name or no address), -EAGAIN (temporary failure), -ENOMEM, or another -errno. */
typedef void (*proxy_resolve_cb)(void *arg, int err, const struct proxy_addr *a, size_t n);

/* Threads are started on demand, up to `threads` (0 = PROXY_RESOLVE_THREADS), with
 * every signal blocked so that signals keep reaching the supervisor's main thread. */
int proxy_resolver_new(struct proxy_poller *pl, unsigned threads, struct proxy_resolver **out);

/* Drop every pending job without calling back. Threads stuck in a slow lookup are not
 * waited for beyond a short grace period: they finish on their own and the last one
 * out frees the shared state. */
void proxy_resolver_free(struct proxy_resolver *r);
/* The notification fd is made (and watched) at the first lookup; this makes it now:
 * for a caller that counts its descriptors across lookups (the unit tests' fixture).
 * 0 or -errno. */
int proxy_resolver_watch(struct proxy_resolver *r);

/* Queue a lookup of `name` (a canonical host name, no trailing dot). On success *job
 * identifies it until the callback runs or proxy_resolver_cancel is called; the
 * callback always runs from the event loop, never from inside submit. */
int proxy_resolver_submit(struct proxy_resolver *r, const char *name, proxy_resolve_cb cb,
			  void *arg, struct proxy_resolve_job **job);

/* The caller no longer wants the answer (timeout, connection closed): the callback
 * will not run, and a late answer is dropped. */
void proxy_resolver_cancel(struct proxy_resolver *r, struct proxy_resolve_job *job);

/* Tests: replace the system lookup (for every resolver thread; set before the first
 * submit). Returns 0 or -errno like the callback's err. NULL restores getaddrinfo. */
typedef int (*proxy_lookup_fn)(const char *name, struct proxy_addr *out, size_t max, size_t *n);
void proxy_resolver_set_lookup(proxy_lookup_fn fn);

/* The system lookup itself, exposed for tests of the flags and the error mapping. */
int proxy_lookup_system(const char *name, struct proxy_addr *out, size_t max, size_t *n);

#endif
