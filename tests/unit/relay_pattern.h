/* Bulk transfers with every byte checked (included after proxy_fixture.h): a
 * position-dependent pseudo-random pattern (byte i of stream `seed` depends on both),
 * so a lost, repeated, reordered or altered byte shows at its offset; and an origin
 * that serves it, one thread per connection. A connection starts with a 16-byte
 * request: 'D' (download: the origin sends len pattern bytes, half-closes, reads to
 * EOF) or 'U' (upload: the origin reads to EOF checking the pattern, then answers
 * "U <count> ok|bad@<offset>\n"). Loopback only. */
#ifndef HALO_TESTS_RELAY_PATTERN_H
#define HALO_TESTS_RELAY_PATTERN_H

#include <stdint.h>
#include <string.h>

#define PAT_REQ_LEN   16
#define PAT_CHUNK     (64 * 1024)
#define PAT_MAX_CONNS 16

static uint64_t pat_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Byte o of stream seed: byte o & 7 (little end first) of the word o >> 3. */
static unsigned char pat_byte(uint32_t seed, uint64_t o)
{
	return (unsigned char)(pat_mix(((uint64_t)seed << 40) ^ (o >> 3)) >> ((o & 7) * 8));
}

/* Bytes [off, off+n) of stream seed: whole words stored at once between the ends (the
 * suites move gigabytes through it, and under ASan a store a byte was most of their
 * time). */
static void pat_fill(uint32_t seed, uint64_t off, unsigned char *b, size_t n)
{
	size_t i = 0;

	for (; i < n && ((off + i) & 7); i++)
		b[i] = pat_byte(seed, off + i);
	for (; n - i >= 8; i += 8) {
		uint64_t w = pat_mix(((uint64_t)seed << 40) ^ ((off + i) >> 3));

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		memcpy(b + i, &w, 8);
	}
	for (; i < n; i++)
		b[i] = pat_byte(seed, off + i);
}

/* The offset of the first byte of b that differs from the stream, or UINT64_MAX. */
static uint64_t pat_check(uint32_t seed, uint64_t off, const unsigned char *b, size_t n)
{
	static __thread unsigned char want[PAT_CHUNK];

	for (size_t done = 0; done < n;) {
		size_t k = n - done < PAT_CHUNK ? n - done : PAT_CHUNK;

		pat_fill(seed, off + done, want, k);
		if (memcmp(want, b + done, k) != 0)
			for (size_t i = 0; i < k; i++)
				if (want[i] != b[done + i])
					return off + done + i;
		done += k;
	}
	return UINT64_MAX;
}

static bool pat_write(int fd, uint32_t seed, uint64_t off, uint64_t len)
{
	static __thread unsigned char buf[PAT_CHUNK];

	while (len) {
		size_t k = len < PAT_CHUNK ? (size_t)len : PAT_CHUNK, sent = 0;

		pat_fill(seed, off, buf, k);
		while (sent < k) {
			ssize_t w = send(fd, buf + sent, k - sent, MSG_NOSIGNAL);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return false;
			sent += (size_t)w;
		}
		off += k;
		len -= k;
	}
	return true;
}

struct pat_read {
	uint64_t n;   /* bytes read */
	uint64_t bad; /* offset of the first wrong byte, or UINT64_MAX */
	bool eof;
};

/* Read up to max bytes (UINT64_MAX: until EOF) of stream seed from offset off. */
static struct pat_read pat_read(int fd, uint32_t seed, uint64_t off, uint64_t max)
{
	static __thread unsigned char buf[PAT_CHUNK];
	struct pat_read r = {.bad = UINT64_MAX};

	while (r.n < max) {
		size_t want = max - r.n < PAT_CHUNK ? (size_t)(max - r.n) : PAT_CHUNK;
		ssize_t k = recv(fd, buf, want, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r.eof = k == 0;
			break;
		}
		if (r.bad == UINT64_MAX)
			r.bad = pat_check(seed, off + r.n, buf, (size_t)k);
		r.n += (uint64_t)k;
	}
	return r;
}

static void pat_request(int fd, char mode, uint32_t seed, uint64_t len)
{
	unsigned char req[PAT_REQ_LEN] = {(unsigned char)mode};

	memcpy(req + 4, &seed, 4);
	memcpy(req + 8, &len, 8);
	cli_send(fd, req, sizeof(req));
}

/* ---------------------------------------------------------------- origin */

struct pat_origin {
	int lfd, port;
	pthread_t th;
	pthread_t conns[PAT_MAX_CONNS];
	atomic_int n_conns; /* written by the accept thread */
	int n_joined;
	volatile bool stop;
};

static void *pat_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	unsigned char req[PAT_REQ_LEN], junk[4096];
	struct timeval tv = {20, 0};
	uint32_t seed;
	uint64_t len;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (cli_recv_n(fd, (char *)req, sizeof(req)) == sizeof(req)) {
		memcpy(&seed, req + 4, 4);
		memcpy(&len, req + 8, 8);
		if (req[0] == 'D' && pat_write(fd, seed, 0, len)) {
			shutdown(fd, SHUT_WR);
		} else if (req[0] == 'U') {
			struct pat_read r = pat_read(fd, seed, 0, UINT64_MAX);
			char reply[64];
			int n = r.bad == UINT64_MAX
				    ? snprintf(reply, sizeof(reply), "U %llu ok\n",
					       (unsigned long long)r.n)
				    : snprintf(reply, sizeof(reply), "U %llu bad@%llu\n",
					       (unsigned long long)r.n, (unsigned long long)r.bad);

			send(fd, reply, (size_t)n, MSG_NOSIGNAL);
			shutdown(fd, SHUT_WR);
		}
	}
	while (recv(fd, junk, sizeof(junk), 0) > 0)
		; /* until the peer is done */
	close(fd);
	return NULL;
}

static void *pat_origin_loop(void *arg)
{
	struct pat_origin *o = arg;

	for (;;) {
		int fd = accept4(o->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (o->stop) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		if (fd < 0)
			continue;
		int i = atomic_load(&o->n_conns);

		ck_assert_int_lt(i, PAT_MAX_CONNS);
		ck_assert_int_eq(pthread_create(&o->conns[i], NULL, pat_conn, (void *)(intptr_t)fd),
				 0);
		atomic_store(&o->n_conns, i + 1);
	}
}

static void pat_origin_start(struct pat_origin *o)
{
	memset(o, 0, sizeof(*o));
	o->lfd = fx_listen("127.0.0.1", &o->port);
	ck_assert_int_eq(pthread_create(&o->th, NULL, pat_origin_loop, o), 0);
}

/* Wait for every connection accepted so far to finish (its fd closed). Call only
 * when no connection is being accepted. */
static void pat_origin_join(struct pat_origin *o)
{
	for (; o->n_joined < atomic_load(&o->n_conns); o->n_joined++)
		pthread_join(o->conns[o->n_joined], NULL);
}

static void pat_origin_stop(struct pat_origin *o)
{
	o->stop = true;
	close(cli_connect(o->port));
	pthread_join(o->th, NULL);
	pat_origin_join(o);
	close(o->lfd);
}

#endif
