/* Word-wise operations on packed rows; the hot loops of every consumer. */
#include "config.h"
#include <string.h>
#include "internal.h"

static inline uint64_t mk_lomask(int64_t b) /* bits [0, b) of a word, 0 <= b <= 64 */
{
	return b >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << b) - 1);
}

void mk_bits_set_range(uint64_t *w, int64_t lo, int64_t hi)
{
	int64_t wl, wh;
	if (lo >= hi)
		return;
	wl = lo >> 6;
	wh = (hi - 1) >> 6;
	if (wl == wh) {
		w[wl] |= mk_lomask(hi - (wl << 6)) & ~mk_lomask(lo & 63);
		return;
	}
	w[wl] |= ~mk_lomask(lo & 63);
	if (wh > wl + 1)
		memset(w + wl + 1, 0xff, (size_t)(wh - wl - 1) * sizeof *w);
	w[wh] |= mk_lomask(hi - (wh << 6));
}

bool mk_bits_any_range(const uint64_t *w, int64_t lo, int64_t hi)
{
	int64_t wl, wh, k;
	if (lo >= hi)
		return false;
	wl = lo >> 6;
	wh = (hi - 1) >> 6;
	if (wl == wh)
		return (w[wl] & mk_lomask(hi - (wl << 6)) & ~mk_lomask(lo & 63)) != 0;
	if (w[wl] & ~mk_lomask(lo & 63))
		return true;
	for (k = wl + 1; k < wh; k++)
		if (w[k])
			return true;
	return (w[wh] & mk_lomask(hi - (wh << 6))) != 0;
}

bool mk_bits_all_range(const uint64_t *w, int64_t lo, int64_t hi)
{
	int64_t wl, wh, k;
	uint64_t m;
	if (lo >= hi)
		return true;
	wl = lo >> 6;
	wh = (hi - 1) >> 6;
	if (wl == wh) {
		m = mk_lomask(hi - (wl << 6)) & ~mk_lomask(lo & 63);
		return (w[wl] & m) == m;
	}
	m = ~mk_lomask(lo & 63);
	if ((w[wl] & m) != m)
		return false;
	for (k = wl + 1; k < wh; k++)
		if (~w[k])
			return false;
	m = mk_lomask(hi - (wh << 6));
	return (w[wh] & m) == m;
}

MK_HOT uint64_t mk_bits_count(const uint64_t *w, size_t nwords)
{
	uint64_t c = 0;
	for (size_t k = 0; k < nwords; k++)
		c += (uint64_t)__builtin_popcountll(w[k]);
	return c;
}

void mk_bits_zero(uint64_t *w, size_t nwords)
{
	memset(w, 0, nwords * sizeof *w);
}

MK_HOT void mk_bits_or(uint64_t *restrict dst, const uint64_t *restrict src, size_t nwords)
{
	for (size_t k = 0; k < nwords; k++)
		dst[k] |= src[k];
}

MK_HOT void mk_bits_and(uint64_t *restrict dst, const uint64_t *restrict src, size_t nwords)
{
	for (size_t k = 0; k < nwords; k++)
		dst[k] &= src[k];
}

MK_HOT void mk_bits_andnot(uint64_t *restrict dst, const uint64_t *restrict src, size_t nwords)
{
	for (size_t k = 0; k < nwords; k++)
		dst[k] &= ~src[k];
}

void mk_bits_not(uint64_t *w, int64_t n)
{
	size_t nw = mk_words(n);
	for (size_t k = 0; k < nw; k++)
		w[k] = ~w[k];
	if (n & 63)
		w[nw - 1] &= mk_lomask(n & 63);
}

int mk_bits_foreach(const uint64_t *w, size_t nwords,
		    int (*fn)(int64_t j, void *arg), void *arg)
{
	for (size_t k = 0; k < nwords; k++) {
		uint64_t x = w[k];
		while (x) {
			int r = fn((int64_t)(k * 64 + (size_t)__builtin_ctzll(x)), arg);
			if (r)
				return r;
			x &= x - 1;
		}
	}
	return 0;
}

MK_HOT uint64_t mk_bits_and_any(uint64_t *restrict dst, const uint64_t *restrict src,
				size_t nwords)
{
	uint64_t acc = 0;
	for (size_t k = 0; k < nwords; k++)
		acc |= (dst[k] &= src[k]);
	return acc;
}

MK_HOT void mk_bits_or_shl(uint64_t *restrict dst, const uint64_t *restrict src, size_t k0,
			   size_t k1, unsigned r)
{
	if (k0 == 0 && k0 < k1)
		dst[k0++] |= src[0] << r;
	for (size_t k = k0; k < k1; k++)
		dst[k] |= src[k] << r | src[k - 1] >> (64 - r);
}

int64_t mk_bits_next(const uint64_t *w, int64_t nbits, int64_t from, bool set)
{
	int64_t k = from >> 6, nw = (nbits + 63) >> 6;
	uint64_t flip = set ? 0 : ~(uint64_t)0, x;
	if (from >= nbits)
		return nbits;
	x = (w[k] ^ flip) & (~(uint64_t)0 << (from & 63));
	while (!x) {
		if (++k >= nw)
			return nbits;
		x = w[k] ^ flip;
	}
	k = (k << 6) + __builtin_ctzll(x);
	return k < nbits ? k : nbits;
}

/* dst = bits [lo, lo + len) of src; src must be readable one word past the
 * last word holding a bit of the range (callers keep a spare zero word). */
void mk_bits_extract(uint64_t *dst, const uint64_t *src, int64_t lo, int64_t len)
{
	size_t nw = mk_words(len), w0 = (size_t)(lo >> 6);
	unsigned s = (unsigned)(lo & 63);

	if (s == 0) {
		memmove(dst, src + w0, nw * sizeof *dst);
	} else {
		for (size_t k = 0; k < nw; k++)
			dst[k] = (src[w0 + k] >> s) | (src[w0 + k + 1] << (64 - s));
	}
	if (len & 63)
		dst[nw - 1] &= ((uint64_t)1 << (len & 63)) - 1;
}
