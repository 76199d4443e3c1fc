/* The in-sandbox DNS stub's pure parts: a strict parser of one query (RFC 1035 4.1),
 * the answers it gives, and the fake-address map behind them. No I/O.
 *
 * Only the one question a stub resolver sends is accepted: QR clear, QDCOUNT 1, no
 * answer or authority records, at most one additional record (an EDNS OPT, skipped
 * unread), and a name without compression pointers (a query has nothing earlier to
 * point at, so a pointer can only be a loop or out of range). Everything else is
 * FORMERR, or dropped when not even a header came. */
#ifndef HALO_PROXY_DNS_H
#define HALO_PROXY_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROXY_DNS_HEADER     12
#define PROXY_DNS_MAX_NAME   253  /* text, without the trailing dot */
#define PROXY_DNS_MAX_QUERY  4096 /* bytes; a TCP length beyond closes the connection */
#define PROXY_DNS_MAX_ANSWER 600  /* header + question (<= 259) + one A record */
#define PROXY_DNS_TTL	     30	  /* seconds: the map is stable per run, keep caches short */

#define PROXY_DNS_TYPE_A    1
#define PROXY_DNS_TYPE_AAAA 28
#define PROXY_DNS_CLASS_IN  1

enum proxy_dns_rcode {
	PROXY_DNS_NOERROR = 0,
	PROXY_DNS_FORMERR = 1,
	PROXY_DNS_SERVFAIL = 2,
	PROXY_DNS_NXDOMAIN = 3,
	PROXY_DNS_NOTIMP = 4,
	PROXY_DNS_REFUSED = 5,
};

enum proxy_dns_result {
	PROXY_DNS_OK,	  /* one well-formed question: q is filled */
	PROXY_DNS_ANSWER, /* answer q->rcode with the header (and question when known) */
	PROXY_DNS_DROP,	  /* no header, or a response: never answered */
};

struct proxy_dns_query {
	uint16_t id;
	uint16_t flags; /* as sent (RD is echoed) */
	uint16_t qtype, qclass;
	enum proxy_dns_rcode rcode; /* PROXY_DNS_ANSWER: what to answer */
	size_t question_len;	    /* wire bytes of the question after the header; 0: none */
	char name[PROXY_DNS_MAX_NAME + 1]; /* lower-cased, dotted, no trailing dot */
	const char *why;		   /* PROXY_DNS_ANSWER / DROP: what is wrong */
};

enum proxy_dns_result proxy_dns_parse(const uint8_t *msg, size_t len, struct proxy_dns_query *q);

/* The response to q (parsed from msg): rcode, and one A record with `a4` when it is
 * not NULL. Returns its length, or -1 when cap is too small. */
int proxy_dns_answer(const struct proxy_dns_query *q, const uint8_t *msg,
		     enum proxy_dns_rcode rcode, const uint8_t *a4, uint8_t *out, size_t cap);

/* The fake range: 198.18.0.0/15 (RFC 2544 benchmarking), never routed on the
 * internet and refused by the proxy's address rule, so a fake address can neither
 * collide with a destination the policy could allow nor be dialled by mistake. */
#define PROXY_FAKE_NET	  0xc6120000u /* 198.18.0.0 */
#define PROXY_FAKE_MASK	  0xfffe0000u
#define PROXY_FAKE_MAX	  16384 /* names per run; beyond, SERVFAIL */
#define PROXY_FAKE_PREFIX "198.18.0.0/15"

struct proxy_fakeip {
	char **names; /* names[i] holds PROXY_FAKE_NET + 1 + i */
	size_t n, cap;
	uint32_t *slots; /* open addressing: index + 1, 0 empty */
	size_t n_slots;
};

/* The address of `name` (canonical), allocated on first use: stable for the run.
 * 0 or -ENOMEM / -ENOSPC (the range's per-run cap is spent). `a4` in network order. */
int proxy_fakeip_get(struct proxy_fakeip *m, const char *name, uint8_t a4[4]);
/* The name behind a fake address, or NULL (not in the range, never handed out). */
const char *proxy_fakeip_name(const struct proxy_fakeip *m, const uint8_t a4[4]);
bool proxy_fakeip_in_range(const uint8_t a4[4]);
void proxy_fakeip_free(struct proxy_fakeip *m);

#endif
