/* Credential masking: the values the proxy adds to requests never come back inside
 * in a response (an echo endpoint, TRACE on another path, an error page quoting the
 * request). Every occurrence of a pattern is overwritten with '*', byte for byte, so
 * lengths and framing stay what the origin sent.
 *
 * A body arrives in pieces: an occurrence may straddle two of them. The masker holds
 * back the last (longest pattern - 1) bytes of what it was given, in their original
 * form, and searches them again with the next piece; whatever is before them can
 * hold no occurrence that is not complete, so it is passed on. flush() gives the held
 * bytes at the end of the body. Overlapping occurrences of several patterns are all
 * masked: ranges are found on the original bytes and written only once no later
 * search can read them. */
#include <errno.h>
#include <string.h>

#include "proxy/proxy_parse.h"

int proxy_mask_init(struct proxy_mask *m, const char *const *pats, size_t n)
{
	return proxy_mask_init_stems(m, pats, NULL, n);
}

int proxy_mask_init_stems(struct proxy_mask *m, const char *const *pats, const size_t *stems,
			  size_t n)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		size_t l = pats[i] ? strlen(pats[i]) : 0;

		if (!l)
			continue;
		if (l > PROXY_MASK_MAX_LEN || m->n == PROXY_MASK_MAX_PATS)
			return -EINVAL;
		m->pat[m->n] = pats[i];
		m->stem[m->n] = stems && stems[i] && stems[i] < l ? stems[i] : l;
		m->len[m->n++] = l;
		if (l - 1 > m->keep)
			m->keep = l - 1;
	}
	return 0;
}

void proxy_mask_reset(struct proxy_mask *m)
{
	m->hold_len = m->hold_masked = 0;
}

/* The next occurrence of pattern p's stem (the whole pattern, unless cut ones are
 * masked too) in w[from..wl). memchr for its first byte, then its last, then the rest: where that
 * byte is rare (binary bodies, zeros) this runs at memchr's speed, 30 times glibc's memmem for
 * 8-4096 byte needles. Where it is frequent (text), memmem's shift table wins: after a few false
 * starts, it takes over. */
static const char *find(const struct proxy_mask *m, size_t p, const char *w, size_t wl, size_t from)
{
	const char *pat = m->pat[p], *s = w + from, *end;
	size_t l = m->stem[p];

	if (from > wl || wl - from < l)
		return NULL;
	end = w + wl - l; /* the last possible start */
	for (int miss = 0; s <= end && miss < 16; miss++, s++) {
		if (!(s = memchr(s, pat[0], (size_t)(end - s) + 1)))
			return NULL;
		if (s[l - 1] == pat[l - 1] && memcmp(s + 1, pat + 1, l - 1) == 0)
			return s;
	}
	return s <= end ? memmem(s, (size_t)(end - s) + l, pat, l) : NULL;
}

/* Mask every occurrence in w[0..wl), in place. Returns the furthest end of an
 * occurrence that starts before `limit` (0 when none does). */
static size_t mark(struct proxy_mask *m, char *w, size_t wl, size_t limit)
{
	const char *nx[PROXY_MASK_MAX_PATS];
	size_t ms = 0, me = 0, reach = 0;
	bool pending = false;

	for (size_t p = 0; p < m->n; p++)
		nx[p] = find(m, p, w, wl, 0);
	for (;;) {
		size_t s = (size_t)-1, e, bp = m->n;

		for (size_t p = 0; p < m->n; p++)
			if (nx[p] && (size_t)(nx[p] - w) < s) {
				s = (size_t)(nx[p] - w);
				bp = p;
			}
		if (bp == m->n)
			break;
		e = s + m->stem[bp];
		while (e < wl && e - s < m->len[bp] && w[e] == m->pat[bp][e - s])
			e++;		 /* a cut occurrence: as far as it agrees */
		if (pending && s > me) { /* no later search reads before s: write the range */
			memset(w + ms, '*', me - ms);
			ms = s;
			me = e;
		} else if (pending) {
			me = e > me ? e : me;
		} else {
			pending = true;
			ms = s;
			me = e;
		}
		if (s < limit && e > reach)
			reach = e;
		m->hits++;
		nx[bp] = find(m, bp, w, wl, s + 1);
	}
	if (pending)
		memset(w + ms, '*', me - ms);
	return reach;
}

size_t proxy_mask_feed(struct proxy_mask *m, const char *in, size_t n, char *out)
{
	size_t wl = m->hold_len + n, keep, emit, reach;

	if (!m->n) {
		memmove(out, in, n);
		return n;
	}
	memcpy(out, m->hold, m->hold_len);
	memcpy(out + m->hold_len, in, n);
	keep = wl < m->keep ? wl : m->keep;
	emit = wl - keep;
	memcpy(m->hold, out + emit, keep); /* searched again, unmasked, with the next piece */
	reach = mark(m, out, wl, emit);
	memset(out, '*', m->hold_masked);
	if (m->hold_masked > reach)
		reach = m->hold_masked;
	m->hold_masked = reach > emit ? reach - emit : 0;
	m->hold_len = keep;
	return emit;
}

size_t proxy_mask_flush(struct proxy_mask *m, char *out)
{
	size_t n = m->hold_len;

	memcpy(out, m->hold, n);
	if (m->n)
		mark(m, out, n, 0);
	memset(out, '*', m->hold_masked);
	proxy_mask_reset(m);
	return n;
}

void proxy_mask_buf(struct proxy_mask *m, char *buf, size_t n)
{
	mark(m, buf, n, 0);
}
