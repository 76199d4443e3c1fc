/* The index file's MAC (scan_index.h: linux_index_checksum). Pure, like scan_index.c:
 * the key is given (scan_index_key.c reads it), nothing here makes a system call. */
#include <string.h>

#include "linux/scan_index.h"

#define HEADER_LEN 64

/* The file's checksum is SipHash-2-4 under the user's index key
 * (linux_index_set_key; scan_index_key.c keeps it where no sandbox sees it). A
 * command of the same user can write an index place that no launch had masked yet
 * (one it made itself, that a launch with another XDG_STATE_HOME uses later): an
 * unkeyed sum let it forge a listing without the .env records. Without the key no
 * forged file is believed. Over the header's first 56 bytes (everything but the
 * checksum) and everything after its 64. */
static uint64_t key0, key1;

void linux_index_set_key(const unsigned char key[16])
{
	memcpy(&key0, key, 8);
	memcpy(&key1, key + 8, 8);
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = ROTL(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = ROTL(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = ROTL(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = ROTL(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = ROTL(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = ROTL(s->v2, 32);
}

static inline void sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* Whole words of p into s; how many bytes that took. */
static size_t sip_words(struct sip *s, const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t m;
		memcpy(&m, p + i, 8); /* little-endian hosts: the file never leaves one */
		sip_word(s, m);
	}
	return i;
}

/* The last bytes (< 8) and the message's whole length, then the finalisation. */
static uint64_t sip_end(struct sip *s, const unsigned char *tail, size_t left, size_t total)
{
	uint64_t m = (uint64_t)(total & 0xff) << 56;

	for (size_t i = 0; i < left; i++)
		m |= (uint64_t)tail[i] << (8 * i);
	sip_word(s, m);
	s->v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

static struct sip sip_start(void)
{
	return (struct sip){0x736f6d6570736575ULL ^ key0, 0x646f72616e646f6dULL ^ key1,
			    0x6c7967656e657261ULL ^ key0, 0x7465646279746573ULL ^ key1};
}

uint64_t linux_index_siphash(const void *p, size_t n)
{
	struct sip s = sip_start();
	size_t w = sip_words(&s, p, n);

	return sip_end(&s, (const unsigned char *)p + w, n - w, n);
}

uint64_t linux_index_checksum(const void *file, size_t len)
{
	const unsigned char *b = file;
	struct sip s = sip_start();
	size_t w;

	if (len < HEADER_LEN)
		return 0;
	sip_words(&s, b, HEADER_LEN - 8); /* all but the checksum: whole words */
	w = sip_words(&s, b + HEADER_LEN, len - HEADER_LEN);
	return sip_end(&s, b + HEADER_LEN + w, len - HEADER_LEN - w, len - 8);
}
