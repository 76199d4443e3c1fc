/* The DNS stub's parser, answers and fake-address map (proxy/dns.h). Every byte of a
 * query is outside input from the sandbox: lengths are checked before each read, and
 * a name is rebuilt label by label, never trusted as text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/dns.h"

#define FLAG_QR	  0x8000u
#define FLAG_AA	  0x0400u
#define FLAG_RD	  0x0100u
#define FLAG_RA	  0x0080u
#define OPCODE(f) (((f) >> 11) & 0xfu)
#define LABEL_MAX 63
#define WIRE_MAX  255 /* a name on the wire, its length octets and the root included */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static enum proxy_dns_result answer_with(struct proxy_dns_query *q, enum proxy_dns_rcode rc,
					 const char *why)
{
	q->rcode = rc;
	q->why = why;
	return PROXY_DNS_ANSWER;
}

/* Letters, digits, '-' and '_' (SRV-style labels): anything else in a label could
 * only make the text ambiguous ('.') or unprintable, and Decide() refuses it anyway. */
static bool label_byte_ok(uint8_t ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_';
}

/* The question's name from msg[at]: *end is the offset after its root label. */
static enum proxy_dns_result parse_name(const uint8_t *msg, size_t len, size_t at,
					struct proxy_dns_query *q, size_t *end)
{
	size_t out = 0, wire = 0;

	for (;;) {
		uint8_t l;

		if (at >= len)
			return answer_with(q, PROXY_DNS_FORMERR, "the name is cut short");
		l = msg[at];
		if ((l & 0xc0) == 0xc0)
			return answer_with(q, PROXY_DNS_FORMERR,
					   "a compression pointer in the question");
		if (l & 0xc0)
			return answer_with(
			    q, PROXY_DNS_FORMERR,
			    "a label longer than 63 bytes (or an extended label type)");
		wire += 1u + l;
		if (wire > WIRE_MAX)
			return answer_with(q, PROXY_DNS_FORMERR, "a name longer than 255 bytes");
		at++;
		if (l == 0)
			break;
		if (l > len - at)
			return answer_with(q, PROXY_DNS_FORMERR, "a label is cut short");
		if (out)
			q->name[out++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t ch = msg[at + i];

			if (!label_byte_ok(ch))
				return answer_with(q, PROXY_DNS_REFUSED,
						   "a label holds a byte no host name has");
			q->name[out++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
		}
		at += l;
	}
	q->name[out] = '\0';
	*end = at;
	return PROXY_DNS_OK;
}

enum proxy_dns_result proxy_dns_parse(const uint8_t *msg, size_t len, struct proxy_dns_query *q)
{
	size_t end = 0;
	enum proxy_dns_result r;

	memset(q, 0, sizeof(*q));
	if (len < PROXY_DNS_HEADER) {
		q->why = "shorter than a DNS header";
		return PROXY_DNS_DROP;
	}
	q->id = get16(msg);
	q->flags = get16(msg + 2);
	if (q->flags & FLAG_QR) {
		q->why = "a response, not a query";
		return PROXY_DNS_DROP;
	}
	if (OPCODE(q->flags) != 0)
		return answer_with(q, PROXY_DNS_NOTIMP, "not a standard query");
	if (get16(msg + 4) != 1)
		return answer_with(q, PROXY_DNS_FORMERR, "not exactly one question");
	if (get16(msg + 6) || get16(msg + 8) || get16(msg + 10) > 1)
		return answer_with(q, PROXY_DNS_FORMERR, "records in a query");
	r = parse_name(msg, len, PROXY_DNS_HEADER, q, &end);
	if (r != PROXY_DNS_OK)
		return r;
	if (len - end < 4)
		return answer_with(q, PROXY_DNS_FORMERR, "the question is cut short");
	q->qtype = get16(msg + end);
	q->qclass = get16(msg + end + 2);
	q->question_len = end + 4 - PROXY_DNS_HEADER;
	/* An additional record (EDNS) may follow; without one, nothing may. */
	if (get16(msg + 10) == 0 && len != end + 4)
		return answer_with(q, PROXY_DNS_FORMERR, "bytes after the question");
	if (!q->name[0])
		return answer_with(q, PROXY_DNS_REFUSED, "the root name");
	if (q->qclass != PROXY_DNS_CLASS_IN)
		return answer_with(q, PROXY_DNS_REFUSED, "not class IN");
	return PROXY_DNS_OK;
}

int proxy_dns_answer(const struct proxy_dns_query *q, const uint8_t *msg,
		     enum proxy_dns_rcode rcode, const uint8_t *a4, uint8_t *out, size_t cap)
{
	size_t qlen = q->question_len, n = PROXY_DNS_HEADER + qlen + (a4 ? 16 : 0);

	if (n > cap)
		return -1;
	memset(out, 0, PROXY_DNS_HEADER);
	put16(out, q->id);
	/* A response, our own view (authoritative), recursion "available": nothing is
	 * ever asked of anyone else. TC never: every answer fits. */
	put16(out + 2, FLAG_QR | FLAG_AA | (q->flags & FLAG_RD) | FLAG_RA | (unsigned)rcode);
	put16(out + 4, qlen ? 1 : 0);
	put16(out + 6, a4 ? 1 : 0);
	memcpy(out + PROXY_DNS_HEADER, msg + PROXY_DNS_HEADER, qlen);
	if (a4) {
		uint8_t *rr = out + PROXY_DNS_HEADER + qlen;

		put16(rr, 0xc000 | PROXY_DNS_HEADER); /* the question's name */
		put16(rr + 2, PROXY_DNS_TYPE_A);
		put16(rr + 4, PROXY_DNS_CLASS_IN);
		put16(rr + 6, 0);
		put16(rr + 8, PROXY_DNS_TTL);
		put16(rr + 10, 4);
		memcpy(rr + 12, a4, 4);
	}
	return (int)n;
}

/* ---------------------------------------------------------------- the map */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int grow_slots(struct proxy_fakeip *m)
{
	size_t n = m->n_slots ? m->n_slots * 2 : 64;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		size_t k = (size_t)name_hash(m->names[i]) & (n - 1);

		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = s;
	m->n_slots = n;
	return 0;
}

static void addr_of(size_t i, uint8_t a4[4])
{
	uint32_t v = PROXY_FAKE_NET + 1 + (uint32_t)i;

	a4[0] = (uint8_t)(v >> 24);
	a4[1] = (uint8_t)(v >> 16);
	a4[2] = (uint8_t)(v >> 8);
	a4[3] = (uint8_t)v;
}

int proxy_fakeip_get(struct proxy_fakeip *m, const char *name, uint8_t a4[4])
{
	size_t k;

	if (m->n_slots) {
		for (k = (size_t)name_hash(name) & (m->n_slots - 1); m->slots[k];
		     k = (k + 1) & (m->n_slots - 1))
			if (strcmp(m->names[m->slots[k] - 1], name) == 0) {
				addr_of(m->slots[k] - 1, a4);
				return 0;
			}
	}
	if (m->n >= PROXY_FAKE_MAX)
		return -ENOSPC;
	if ((m->n + 1) * 2 > m->n_slots && grow_slots(m) != 0)
		return -ENOMEM;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		char **v = realloc(m->names, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->names = v;
		m->cap = cap;
	}
	if (!(m->names[m->n] = strdup(name)))
		return -ENOMEM;
	for (k = (size_t)name_hash(name) & (m->n_slots - 1); m->slots[k];
	     k = (k + 1) & (m->n_slots - 1))
		;
	m->slots[k] = (uint32_t)m->n + 1;
	addr_of(m->n++, a4);
	return 0;
}

bool proxy_fakeip_in_range(const uint8_t a4[4])
{
	uint32_t v = (uint32_t)a4[0] << 24 | (uint32_t)a4[1] << 16 | (uint32_t)a4[2] << 8 | a4[3];

	return (v & PROXY_FAKE_MASK) == PROXY_FAKE_NET;
}

const char *proxy_fakeip_name(const struct proxy_fakeip *m, const uint8_t a4[4])
{
	uint32_t v = (uint32_t)a4[0] << 24 | (uint32_t)a4[1] << 16 | (uint32_t)a4[2] << 8 | a4[3];

	if (!proxy_fakeip_in_range(a4) || v <= PROXY_FAKE_NET || v - PROXY_FAKE_NET - 1 >= m->n)
		return NULL;
	return m->names[v - PROXY_FAKE_NET - 1];
}

void proxy_fakeip_free(struct proxy_fakeip *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
