/* The tunnel's ClientHello check: a table of hostile ClientHellos built byte by byte
 * (fragmented across records and reads, oversize, duplicate server_name, several
 * host_names, broken lengths at every level, records before the hello, the SSLv2
 * form, non-TLS first bytes), every prefix of a fragmented hello, the name rule
 * (normalisation, IP targets, no name, ECH), and the alert. */
#include <stdio.h>
#include <string.h>

#include "proxy/proxy_parse.h"
#include "tests/unit/unit.h"

#define ROWS(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct buf {
	uint8_t b[70000];
	size_t n;
};

static void put8(struct buf *b, unsigned v)
{
	b->b[b->n++] = (uint8_t)v;
}
static void put16(struct buf *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v);
}
static void put24(struct buf *b, size_t v)
{
	put8(b, (unsigned)(v >> 16));
	put16(b, (unsigned)(v & 0xffff));
}
static void putn(struct buf *b, const void *p, size_t n)
{
	if (n) /* p may be NULL for an empty part */
		memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void putrep(struct buf *b, unsigned v, size_t n)
{
	memset(b->b + b->n, (int)v, n);
	b->n += n;
}
/* Back-patch a length field of `bytes` bytes at `at` to cover everything after it. */
static void patch(struct buf *b, size_t at, int bytes)
{
	size_t v = b->n - at - (size_t)bytes;

	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		b->b[at + (size_t)i] = (uint8_t)v;
}

/* What to break: one corruption per row. */
enum tweak {
	T_NONE,
	T_HELLO_VERSION,   /* legacy_version 2.0 */
	T_SESSION_33,	   /* session id of 33 bytes */
	T_CIPHERS_ODD,	   /* 3 bytes of cipher suites */
	T_CIPHERS_EMPTY,   /* no cipher suites */
	T_COMP_EMPTY,	   /* no compression methods */
	T_EXT_TOTAL_SHORT, /* extensions length one short of the extensions */
	T_EXT_TOTAL_LONG,  /* extensions length one past the body */
	T_EXT_OVERRUN,	   /* the last extension's length past the block */
	T_NO_EXTENSIONS,   /* a hello without an extensions block */
	T_NOT_HELLO,	   /* handshake type 2 */
	T_TRAILING,	   /* a byte after the hello in its record */
	T_ZERO_RECORD,	   /* an empty handshake record first */
	T_CCS_BETWEEN,	   /* a ChangeCipherSpec record between two fragments */
	T_REC_VERSION,	   /* record version 2.0 */
	T_REC_TOO_LONG,	   /* record length 2^14 + 1 */
	T_SNI_TYPE_1,	   /* a server_name entry of type 1 */
	T_SNI_EMPTY_NAME,  /* host_name of length 0 */
	T_SNI_NUL,	   /* a NUL inside the host_name */
	T_SNI_LIST_SHORT,  /* server_name list length one short */
	T_SNI_EMPTY_LIST,  /* server_name list of length 0 */
	T_SNI_EXT_EMPTY,   /* server_name extension with no body (the server's form) */
	T_DUP_OTHER,	   /* supported_versions twice */
	T_HS_HUGE,	   /* handshake length 1 MiB */
	T_ESNI,		   /* the ech extension as ESNI's encrypted_server_name (0xffce) */
};

struct spec {
	const char *name;
	const char *sni[3]; /* host_name entries of one server_name extension */
	int n_sni_ext;	    /* server_name extensions (each with the entries above) */
	bool ech;
	size_t pad;  /* bytes of a padding extension (21) */
	size_t frag; /* record fragment size; 0: one record */
	enum tweak tweak;
	enum proxy_tls_result want;
	const char *want_sni; /* on HELLO */
	const char *why;      /* on ERROR: a piece of it */
};

static void ext_server_name(struct buf *b, const struct spec *s)
{
	size_t ext, list;

	put16(b, 0);
	ext = b->n;
	put16(b, 0);
	if (s->tweak == T_SNI_EXT_EMPTY)
		goto done;
	list = b->n;
	put16(b, 0);
	for (int i = 0; i < 3 && s->sni[i]; i++) {
		size_t len = strlen(s->sni[i]);

		put8(b, s->tweak == T_SNI_TYPE_1 ? 1 : 0);
		put16(b, s->tweak == T_SNI_EMPTY_NAME ? 0 : (unsigned)len);
		if (s->tweak != T_SNI_EMPTY_NAME)
			putn(b, s->sni[i], len);
		if (s->tweak == T_SNI_NUL)
			b->b[b->n - 2] = 0;
	}
	patch(b, list, 2);
	if (s->tweak == T_SNI_LIST_SHORT)
		b->b[list + 1]--;
	if (s->tweak == T_SNI_EMPTY_LIST)
		b->n = list + 2, b->b[list] = 0, b->b[list + 1] = 0;
done:
	patch(b, ext, 2);
}

/* The handshake message: type, length, ClientHello body. */
static void hello_msg(struct buf *m, const struct spec *s)
{
	size_t hs, exts;

	put8(m, s->tweak == T_NOT_HELLO ? 2 : 1);
	hs = m->n;
	put24(m, 0);
	put16(m, s->tweak == T_HELLO_VERSION ? 0x0200 : 0x0303);
	putrep(m, 0xab, 32);
	put8(m, s->tweak == T_SESSION_33 ? 33 : 32);
	putrep(m, 0x11, s->tweak == T_SESSION_33 ? 33 : 32);
	if (s->tweak == T_CIPHERS_ODD)
		put16(m, 3), putn(m, "\x13\x01\x13", 3);
	else if (s->tweak == T_CIPHERS_EMPTY)
		put16(m, 0);
	else
		put16(m, 4), putn(m, "\x13\x01\x13\x02", 4);
	if (s->tweak == T_COMP_EMPTY)
		put8(m, 0);
	else
		put8(m, 1), put8(m, 0);
	if (s->tweak == T_NO_EXTENSIONS)
		goto done;
	exts = m->n;
	put16(m, 0);
	put16(m, 43), put16(m, 3), put8(m, 2), put16(m, 0x0304); /* supported_versions */
	if (s->tweak == T_DUP_OTHER)
		put16(m, 43), put16(m, 3), put8(m, 2), put16(m, 0x0304);
	for (int i = 0; i < s->n_sni_ext; i++)
		ext_server_name(m, s);
	if (s->ech)
		put16(m, s->tweak == T_ESNI ? 0xffce : 0xfe0d), put16(m, 4),
		    putn(m, "\x00\x00\x01\x02", 4);
	if (s->pad)
		put16(m, 21), put16(m, (unsigned)s->pad), putrep(m, 0, s->pad);
	if (s->tweak == T_EXT_OVERRUN)
		put16(m, 0x1234), put16(m, 9), putn(m, "ab", 2);
	patch(m, exts, 2);
	if (s->tweak == T_EXT_TOTAL_SHORT)
		m->b[exts + 1]--;
	if (s->tweak == T_EXT_TOTAL_LONG)
		m->b[exts + 1]++;
done:
	patch(m, hs, 3);
	if (s->tweak == T_HS_HUGE)
		m->b[hs] = 0x10, m->b[hs + 1] = 0, m->b[hs + 2] = 0;
}

static void record(struct buf *out, unsigned type, unsigned ver, const uint8_t *p, size_t n)
{
	put8(out, type);
	put16(out, ver);
	put16(out, (unsigned)n);
	putn(out, p, n);
}

static struct buf msg, wire;

/* The records carrying the hello, fragmented as the row says. */
static void build(const struct spec *s)
{
	size_t frag = s->frag ? s->frag : 16384, off = 0;
	unsigned ver = s->tweak == T_REC_VERSION ? 0x0200 : 0x0301;

	msg.n = wire.n = 0;
	hello_msg(&msg, s);
	if (s->tweak == T_TRAILING)
		put8(&msg, 0x99);
	if (s->tweak == T_ZERO_RECORD)
		record(&wire, 0x16, ver, NULL, 0);
	if (s->tweak == T_REC_TOO_LONG) {
		put8(&wire, 0x16), put16(&wire, ver), put16(&wire, 16385);
		putn(&wire, msg.b, msg.n);
		return;
	}
	while (off < msg.n) {
		size_t k = msg.n - off < frag ? msg.n - off : frag;

		record(&wire, 0x16, ver, msg.b + off, k);
		if (s->tweak == T_CCS_BETWEEN && off == 0)
			record(&wire, 0x14, 0x0303, (const uint8_t *)"\x01", 1);
		off += k;
	}
}

#define OK   PROXY_TLS_HELLO
#define ERR  PROXY_TLS_ERROR
#define MORE PROXY_TLS_NEED_MORE
#define A    "allowed.test"
#define E    "evil.test"
#define S1(x)                                                                                      \
	{                                                                                          \
		x, NULL, NULL                                                                      \
	}

static const struct spec specs[] = {
    {"plain hello, one name", S1(A), 1, false, 0, 0, T_NONE, OK, A, NULL},
    {"name with trailing dot and case, as sent", S1("Allowed.Test."), 1, false, 0, 0, T_NONE, OK,
     "Allowed.Test.", NULL},
    {"no server_name", S1(NULL), 0, false, 0, 0, T_NONE, OK, NULL, NULL},
    {"no extensions at all", S1(NULL), 0, false, 0, 0, T_NO_EXTENSIONS, OK, NULL, NULL},
    {"ECH with an outer name", S1(A), 1, true, 0, 0, T_NONE, OK, A, NULL},
    {"ESNI (0xffce, ECH's predecessor) with a name", S1(A), 1, true, 0, 0, T_ESNI, OK, A, NULL},
    {"fragmented: 1-byte records", S1(A), 1, false, 0, 1, T_NONE, OK, A, NULL},
    {"fragmented: 3-byte records (header split)", S1(A), 1, false, 0, 3, T_NONE, OK, A, NULL},
    {"fragmented: 100-byte records", S1(E), 1, false, 600, 100, T_NONE, OK, E, NULL},
    {"large but within bound (15 KiB)", S1(A), 1, false, 15000, 4000, T_NONE, OK, A, NULL},
    {"a full 2^14 record and more (16.4 KiB)", S1(A), 1, false, 16300, 0, T_NONE, ERR, NULL,
     "larger than 16 KiB"},
    {"oversize across records (20 KiB)", S1(A), 1, false, 20000, 8000, T_NONE, ERR, NULL,
     "larger than 16 KiB"},
    {"handshake length says 1 MiB", S1(A), 1, false, 0, 0, T_HS_HUGE, ERR, NULL,
     "larger than 16 KiB"},
    {"two server_name extensions", S1(E), 2, false, 0, 0, T_NONE, ERR, NULL,
     "duplicate server_name"},
    {"two host_names in one list",
     {A, E, NULL},
     1,
     false,
     0,
     0,
     T_NONE,
     ERR,
     NULL,
     "more than one host_name"},
    {"the same host_name twice",
     {A, A, NULL},
     1,
     false,
     0,
     0,
     T_NONE,
     ERR,
     NULL,
     "more than one host_name"},
    {"duplicate other extension", S1(A), 1, false, 0, 0, T_DUP_OTHER, ERR, NULL,
     "duplicate extension"},
    {"entry of type 1", S1(A), 1, false, 0, 0, T_SNI_TYPE_1, ERR, NULL, "other than host_name"},
    {"empty host_name", S1(A), 1, false, 0, 0, T_SNI_EMPTY_NAME, ERR, NULL, "empty"},
    {"NUL in host_name", S1("evil.test\x01x"), 1, false, 0, 0, T_SNI_NUL, ERR, NULL,
     "outside visible ASCII"},
    {"byte 0xc3 in host_name", S1("\xc3\xa9vil.test"), 1, false, 0, 0, T_NONE, ERR, NULL,
     "outside visible ASCII"},
    {"server_name list one short", S1(A), 1, false, 0, 0, T_SNI_LIST_SHORT, ERR, NULL,
     "server_name"},
    {"server_name list empty", S1(A), 1, false, 0, 0, T_SNI_EMPTY_LIST, ERR, NULL,
     "empty server_name list"},
    {"server_name extension without body", S1(A), 1, false, 0, 0, T_SNI_EXT_EMPTY, ERR, NULL,
     "server_name"},
    {"legacy_version 2.0", S1(A), 1, false, 0, 0, T_HELLO_VERSION, ERR, NULL, "version"},
    {"session id of 33 bytes", S1(A), 1, false, 0, 0, T_SESSION_33, ERR, NULL, "session id"},
    {"odd cipher suites", S1(A), 1, false, 0, 0, T_CIPHERS_ODD, ERR, NULL, "cipher suites"},
    {"no cipher suites", S1(A), 1, false, 0, 0, T_CIPHERS_EMPTY, ERR, NULL, "cipher suites"},
    {"no compression methods", S1(A), 1, false, 0, 0, T_COMP_EMPTY, ERR, NULL, "compression"},
    {"extensions length short", S1(A), 1, false, 0, 0, T_EXT_TOTAL_SHORT, ERR, NULL,
     "extensions do not fill"},
    {"extensions length long", S1(A), 1, false, 0, 0, T_EXT_TOTAL_LONG, ERR, NULL,
     "extensions do not fill"},
    {"extension overruns the block", S1(A), 1, false, 0, 0, T_EXT_OVERRUN, ERR, NULL, "overruns"},
    {"a ServerHello, not a ClientHello", S1(A), 1, false, 0, 0, T_NOT_HELLO, ERR, NULL,
     "not a ClientHello"},
    {"a byte after the hello in its record", S1(A), 1, false, 0, 0, T_TRAILING, ERR, NULL,
     "after the ClientHello"},
    {"empty handshake record first", S1(A), 1, false, 0, 0, T_ZERO_RECORD, ERR, NULL,
     "empty handshake record"},
    {"ChangeCipherSpec between fragments", S1(E), 1, false, 0, 50, T_CCS_BETWEEN, ERR, NULL,
     "other than handshake before the ClientHello ended (change_cipher_spec)"},
    {"record version 2.0", S1(A), 1, false, 0, 0, T_REC_VERSION, ERR, NULL, "record version"},
    {"record longer than 2^14", S1(A), 1, false, 0, 0, T_REC_TOO_LONG, ERR, NULL, "2^14"},
};

START_TEST(hello_table)
{
	const struct spec *s = &specs[_i];
	struct proxy_tls_hello h;
	enum proxy_tls_result r;

	build(s);
	r = proxy_tls_hello_parse(wire.b, wire.n, &h);
	ck_assert_msg(r == s->want, "%s: result %d, want %d (%s)", s->name, r, s->want, h.why);
	if (r == OK) {
		ck_assert_msg(h.has_sni == (s->want_sni != NULL), "%s: has_sni", s->name);
		if (s->want_sni)
			ck_assert_str_eq(h.sni, s->want_sni);
		ck_assert_int_eq(h.ech, s->ech);
		ck_assert_uint_eq(h.used, wire.n);
	}
	if (r == ERR) {
		ck_assert_msg(strstr(h.why, s->why), "%s: why '%s' lacks '%s'", s->name, h.why,
			      s->why);
		ck_assert(h.alert != 0);
		ck_assert(!h.has_sni);
	}
}
END_TEST

/* Arriving in any number of reads: every proper prefix of an accepted hello waits for
 * more, and what follows the hello (a ChangeCipherSpec, early data) is not counted. */
START_TEST(hello_prefixes)
{
	const struct spec *s = &specs[_i];
	struct proxy_tls_hello h;
	size_t total;

	build(s);
	if (s->want != OK || wire.n > 5000)
		return;
	for (size_t k = 0; k < wire.n; k++) {
		enum proxy_tls_result r = proxy_tls_hello_parse(wire.b, k, &h);
		ck_assert_msg(r == MORE, "%s: prefix %zu gave %d (%s)", s->name, k, r, h.why);
	}
	total = wire.n;
	record(&wire, 0x14, 0x0303, (const uint8_t *)"\x01", 1);
	record(&wire, 0x17, 0x0303, (const uint8_t *)"early", 5);
	ck_assert_int_eq(proxy_tls_hello_parse(wire.b, wire.n, &h), OK);
	ck_assert_uint_eq(h.used, total);
}
END_TEST

/* Erroring rows fail as early as the fault is visible and never later: each prefix
 * is either NEED_MORE or the same error. */
START_TEST(error_prefixes)
{
	const struct spec *s = &specs[_i];
	struct proxy_tls_hello h;

	build(s);
	if (s->want != ERR || wire.n > 5000)
		return;
	for (size_t k = 0; k <= wire.n; k++) {
		enum proxy_tls_result r = proxy_tls_hello_parse(wire.b, k, &h);
		ck_assert_msg(r == MORE || r == ERR, "%s: prefix %zu gave %d", s->name, k, r);
		if (r == ERR)
			ck_assert_msg(strstr(h.why, s->why), "%s: prefix %zu: '%s'", s->name, k,
				      h.why);
	}
}
END_TEST

/* The bound at its edge: a first flight of exactly PROXY_TLS_HELLO_MAX bytes is read,
 * one byte more is refused. */
START_TEST(bound_edge)
{
	struct spec s = {"edge", S1(A), 1, false, 16000, 8000, T_NONE, OK, A, NULL};
	struct proxy_tls_hello h;

	build(&s);
	s.pad += PROXY_TLS_HELLO_MAX - wire.n;
	build(&s);
	ck_assert_uint_eq(wire.n, PROXY_TLS_HELLO_MAX);
	ck_assert_int_eq(proxy_tls_hello_parse(wire.b, wire.n, &h), OK);
	s.pad++;
	build(&s);
	ck_assert_int_eq(proxy_tls_hello_parse(wire.b, wire.n, &h), ERR);
	ck_assert_ptr_nonnull(strstr(h.why, "larger than 16 KiB"));
}
END_TEST

static const struct {
	const char *name;
	const char *in;
	size_t len;
	enum proxy_tls_result want;
} firsts[] = {
    {"nothing yet", "", 0, MORE},
    {"one handshake byte", "\x16", 1, MORE},
    {"SSH banner", "SSH-2.0-OpenSSH_9.2\r\n", 21, PROXY_TLS_NOT_TLS},
    {"plain HTTP", "GET / HTTP/1.1\r\n", 16, PROXY_TLS_NOT_TLS},
    /* A first byte of any TLS record type is TLS: what precedes the hello is refused
     * (stacks drop a warning alert and read the hello behind it). */
    {"an alert record first", "\x15\x03\x03\x00\x02\x02\x28", 7, ERR},
    {"a warning alert, then a hello", "\x15\x03\x01\x00\x02\x01\x5a\x16\x03\x01", 10, ERR},
    {"an alert's first byte alone", "\x15", 1, ERR},
    {"change_cipher_spec first", "\x14\x03\x03\x00\x01\x01", 6, ERR},
    {"application data first", "\x17\x03\x03\x00\x01\x00", 6, ERR},
    {"heartbeat first", "\x18\x03\x03\x00\x01\x01", 6, ERR},
    {"byte 0x19 (no record type)", "\x19\x03\x03", 3, PROXY_TLS_NOT_TLS},
    {"byte 0x13 (no record type)", "\x13\x03\x03", 3, PROXY_TLS_NOT_TLS},
    /* The SSLv2-compatible form: OpenSSL takes high bit + third byte 1 for one. */
    {"SSLv2 hello, header only", "\x80\x2e\x01\x03\x01", 5, MORE},
    {"SSLv2 hello, two bytes", "\x80\x2e", 2, MORE},
    {"SSLv2 hello, whole (3 specs, 16-byte challenge)",
     "\x80\x1c\x01\x03\x01\x00\x03\x00\x00\x00\x10"
     "\x00\x00\x2f"
     "0123456789abcdef",
     30, OK},
    {"SSLv2 hello, version 2.0", "\x80\x1c\x01\x00\x02\x00\x03\x00\x00\x00\x10", 11, ERR},
    {"SSLv2 hello, lengths disagree", "\x80\x1d\x01\x03\x01\x00\x03\x00\x00\x00\x10", 11, ERR},
    {"SSLv2 hello, cipher specs not triples", "\x80\x1b\x01\x03\x01\x00\x02\x00\x00\x00\x10", 11,
     ERR},
    {"SSLv2 hello, challenge of 8", "\x80\x14\x01\x03\x01\x00\x03\x00\x00\x00\x08", 11, ERR},
    {"SSLv2 hello over 16 KiB", "\xff\xff\x01\x03\x01\x7f\xe6\x00\x00\x00\x10", 11, ERR},
    {"high bit, third byte 2: not TLS", "\x80\x2e\x02\x03\x01", 5, PROXY_TLS_NOT_TLS},
    {"handshake record, version 9.9", "\x16\x09\x09\x00\x01\x01", 6, ERR},
    {"handshake record of 0 bytes", "\x16\x03\x01\x00\x00", 5, ERR},
};

START_TEST(first_bytes)
{
	struct proxy_tls_hello h;
	enum proxy_tls_result r =
	    proxy_tls_hello_parse((const uint8_t *)firsts[_i].in, firsts[_i].len, &h);

	ck_assert_msg(r == firsts[_i].want, "%s: %d (%s)", firsts[_i].name, r, h.why);
	if (r == OK) /* the SSLv2 row: no name, its whole length used */
		ck_assert(h.sslv2 && !h.has_sni && h.used == firsts[_i].len);
	if (r == ERR)
		ck_assert(h.alert != 0 && !h.has_sni);
}
END_TEST

/* A record before the hello is named in the rule the audit gets. */
static const struct {
	const char *in;
	size_t len;
	const char *why;
} before[] = {
    {"\x15\x03\x01\x00\x02\x01\x5a", 7, "tls: record before ClientHello (alert)"},
    {"\x14\x03\x03\x00\x01\x01", 6, "tls: record before ClientHello (change_cipher_spec)"},
    {"\x17\x03\x03\x00\x01\x00", 6, "tls: record before ClientHello (application data)"},
    {"\x18", 1, "tls: record before ClientHello (heartbeat)"},
};

START_TEST(record_before_hello)
{
	struct proxy_tls_hello h;

	ck_assert_int_eq(proxy_tls_hello_parse((const uint8_t *)before[_i].in, before[_i].len, &h),
			 ERR);
	ck_assert_str_eq(h.why, before[_i].why);
	ck_assert_int_eq(h.alert, 10); /* unexpected_message */
}
END_TEST

static const struct {
	const char *target, *sni; /* sni NULL: no server_name */
	bool allowed;
} rules[] = {
    {"allowed.test", "allowed.test", true},
    {"allowed.test", "ALLOWED.Test", true}, /* the case folding Decide() uses */
    /* RFC 6066 names carry no trailing dot; an origin (OpenSSL's servername match,
     * HAProxy's req.ssl_sni) that does not strip it serves its default site. */
    {"allowed.test", "allowed.test.", false},
    {"allowed.test", "Allowed.Test.", false},
    {"allowed.test", NULL, false}, /* no name: the origin's default site */
    {"allowed.test", "evil.test", false},
    {"allowed.test", "allowed.test..", false}, /* not a valid name: not the same one */
    {"allowed.test", "sub.allowed.test", false},
    {"allowed.test", "allowed.test.evil", false},
    {"192.0.2.1", NULL, true},
    {"192.0.2.1", "evil.test", false}, /* an IP target names no host: any name is another */
    {"192.0.2.1", "192.0.2.1", true},
    {"2001:db8::1", "2001:DB8::1", true},
    {"2001:db8::1", NULL, true}, /* an address target: no site is named either way */
};

START_TEST(sni_rule)
{
	struct proxy_tls_hello h = {0};
	char rule[300] = "";
	bool ok;

	if (rules[_i].sni) {
		h.has_sni = true;
		snprintf(h.sni, sizeof(h.sni), "%s", rules[_i].sni);
	}
	ok = proxy_tls_sni_allowed(rules[_i].target, &h, rule, sizeof(rule));
	ck_assert_msg(ok == rules[_i].allowed, "row %d", _i);
	if (!ok && rules[_i].sni) {
		char want[300];
		size_t k = strlen(rules[_i].sni);

		if (rules[_i].sni[k - 1] == '.')
			snprintf(
			    want, sizeof(want),
			    "tls: SNI ends with a dot: %s (an origin that keeps the dot serves "
			    "its default site)",
			    rules[_i].sni);
		else
			snprintf(want, sizeof(want), "sni mismatch: %s", rules[_i].sni);
		ck_assert_str_eq(rule, want);
	}
	if (!ok && !rules[_i].sni)
		ck_assert_str_eq(rule, "tls: ClientHello without SNI for a host allowed by name");
}
END_TEST

/* A spliced tunnel also refuses ECH: an origin holding ECH keys serves the encrypted
 * inner name (any site behind its keys), which the proxy cannot read, whatever the
 * outer name says. The name rule comes first, so a mismatch is still named as one. */
static const struct {
	const char *target, *sni;
	bool ech, allowed;
	const char *rule;
} splice_rules[] = {
    {"allowed.test", "allowed.test", false, true, ""},
    {"allowed.test", "allowed.test", true, false,
     "tls: encrypted_client_hello (ECH): the origin may serve the encrypted inner name, which "
     "cannot be checked"},
    {"allowed.test", "evil.test", true, false, "sni mismatch: evil.test"},
    {"192.0.2.1", "192.0.2.1", true, false,
     "tls: encrypted_client_hello (ECH): the origin may serve the encrypted inner name, which "
     "cannot be checked"},
};

START_TEST(splice_rule)
{
	struct proxy_tls_hello h = {0};
	char rule[300] = "";

	h.has_sni = true, h.ech = splice_rules[_i].ech;
	snprintf(h.sni, sizeof(h.sni), "%s", splice_rules[_i].sni);
	ck_assert_int_eq(proxy_tls_splice_allowed(splice_rules[_i].target, &h, rule, sizeof(rule)),
			 splice_rules[_i].allowed);
	ck_assert_str_eq(rule, splice_rules[_i].rule);
}
END_TEST

START_TEST(alert_bytes)
{
	uint8_t out[7];

	ck_assert_int_eq(proxy_tls_alert(PROXY_TLS_ALERT_ACCESS_DENIED, out), 7);
	ck_assert(memcmp(out, "\x15\x03\x03\x00\x02\x02\x31", 7) == 0);
}
END_TEST

static Suite *tls_suite(void)
{
	Suite *s = suite_create("tls_hello");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, hello_table, 0, ROWS(specs));
	tcase_add_loop_test(tc, hello_prefixes, 0, ROWS(specs));
	tcase_add_loop_test(tc, error_prefixes, 0, ROWS(specs));
	tcase_add_loop_test(tc, first_bytes, 0, ROWS(firsts));
	tcase_add_loop_test(tc, record_before_hello, 0, ROWS(before));
	tcase_add_loop_test(tc, sni_rule, 0, ROWS(rules));
	tcase_add_loop_test(tc, splice_rule, 0, ROWS(splice_rules));
	tcase_add_test(tc, bound_edge);
	tcase_add_test(tc, alert_bytes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(tls_suite)
