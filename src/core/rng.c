/*
 * The one random generator: xoshiro256** (Blackman & Vigna) seeded through
 * splitmix64.  Streams are keyed by (seed, tag, index) so that row i of a
 * random pattern does not depend on which thread made it or in what order,
 * and the same seed gives the same mask on every machine.
 */
#include "config.h"
#include <math.h>
#include "internal.h"

uint64_t mk_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void mk_rng_seed(mk_rng *r, uint64_t seed, uint64_t tag, uint64_t index)
{
	uint64_t sm = seed;
	/* Mix the key through splitmix64 steps so nearby keys give unrelated streams. */
	sm = mk_splitmix64(&sm) ^ tag;
	sm = mk_splitmix64(&sm) ^ index;
	for (int k = 0; k < 4; k++)
		r->s[k] = mk_splitmix64(&sm);
}

static inline uint64_t mk_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t mk_rng_next(mk_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = mk_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = mk_rotl(s[3], 45);
	return result;
}

uint64_t mk_rng_below(mk_rng *r, uint64_t bound)
{
	unsigned __int128 m = (unsigned __int128)mk_rng_next(r) * bound;
	uint64_t lo = (uint64_t)m;
	if (lo < bound) {
		uint64_t threshold = -bound % bound;
		while (lo < threshold) {
			m = (unsigned __int128)mk_rng_next(r) * bound;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* The uniforms lie in (0, 1), never 0, so log(u1) is finite. */
void mk_rng_normal2(mk_rng *r, double z[2])
{
	const double two_pi = 6.28318530717958647692; /* M_PI is POSIX's, not C11's */
	double u1 = ((double)(mk_rng_next(r) >> 11) + 0.5) * 0x1p-53;
	double u2 = ((double)(mk_rng_next(r) >> 11) + 0.5) * 0x1p-53;
	double rad = sqrt(-2 * log(u1));

	z[0] = rad * cos(two_pi * u2);
	z[1] = rad * sin(two_pi * u2);
}
