/* The row arithmetic of the tiled kernels (cpu_tiles.c): exponentials,
 * maxima, the element mask 32 cells at a time, and the score bounds that let
 * softmax skip its running maximum.  These loops are built for several
 * vector levels (TILES_CLONES). */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_rows.h"

#define MK_TILES_BOUNDS_PARALLEL ((int64_t)1 << 16) /* n d */

static volatile float tiles_exp_floor = -100.0f;

/* exp for x <= 0, written without calls or branches so that the loops
 * around it vectorise: x = (n + f) ln 2 with n an integer and |f| <= 1/2,
 * 2^f from a degree-5 polynomial with p(0) = 1 (coefficients fitted here by
 * weighted least squares for relative error; 1.9e-7 at most in float32),
 * times 2^n made from its exponent bits.  Fewer operations than a Cody-Waite
 * reduction with a degree-6 polynomial for e^r (the exponentials were 13 %
 * of the dense kernel at d = 64, measured).  Results below 2^-125 are 0,
 * which also makes -inf give exactly 0 (an empty row's sum must stay 0).
 * The clamp lo (below -87) comes from a volatile: were it a constant, the
 * compiler would fold exp(lo) into a separate path for x < lo, a branch, and
 * a loop with branches stays scalar. */
static inline float tiles_exp(float x, float lo)
{
	union { float f; uint32_t u; } r, p2;
	float xc = x < lo ? lo : x;
	float t = xc * 1.44269504088896341f;
	float nf, f, y;
	uint32_t e;

	/* t + 1.5 * 2^23 rounds t to an integer n held in the low mantissa
	 * bits: the exponent 2^n is made from those bits by an add and a
	 * shift (a float-to-int conversion and a multiply cost 12 % more of
	 * the loop, measured) */
	r.f = t + 12582912.0f;
	nf = r.f - 12582912.0f;
	f = t - nf;
	e = r.u - 0x4b400000u + 127u; /* n + 127, the exponent's bits */

	y = 1.326302532e-3f;
	y = y * f + 9.671429172e-3f;
	y = y * f + 5.550738797e-2f;
	y = y * f + 2.402224392e-1f;
	y = y * f + 6.931470037e-1f;
	y = y * f + 1.0f; /* exp(0) = 1 exactly: equal scores give exact shares */
	p2.u = nf > -126.0f ? e << 23 : 0u; /* 2^n, or 0 below 2^-125 */
	return y * p2.f;
}

/* Adds the negated bias to one score row and returns its max. */
TILES_CLONES
float mk_tiles_row_max(float *row, const float *nb, int64_t cols)
{
	float mx = -INFINITY;

#pragma omp simd reduction(max:mx)
	for (int64_t j = 0; j < cols; j++) {
		float s = row[j] + nb[j];
		row[j] = s;
		mx = s > mx ? s : mx;
	}
	return mx;
}

/* Replaces the row by exp(row - m) and returns its sum. */
TILES_CLONES
float mk_tiles_row_exp(float *row, float m, int64_t cols)
{
	float sum = 0.0f, lo = tiles_exp_floor;

#pragma omp simd reduction(+:sum)
	for (int64_t j = 0; j < cols; j++) {
		float e = tiles_exp(row[j] - m, lo);
		row[j] = e;
		sum += e;
	}
	return sum;
}

/* Multiplies a row by c (an output row by 1/l at its end: 1 % of the dense
 * kernel at n = 2048, d = 128 in SSE2, perf). */
TILES_CLONES
void mk_tiles_scale(float *row, float c, int64_t d)
{
	for (int64_t k = 0; k < d; k++)
		row[k] *= c;
}

/* One score row into the running state; the row becomes the weights that
 * multiply V.  Returns the factor the row's output must be rescaled by. */
float mk_tiles_row_update(float *row, const float *nb, int64_t cols, float *m, double *l)
{
	float mx = mk_tiles_row_max(row, nb, cols), mnew, alpha;

	if (mx == -INFINITY) { /* nothing visited here: keep the state */
		memset(row, 0, (size_t)cols * sizeof *row);
		return 1.0f;
	}
	mnew = mx > *m ? mx : *m;
	alpha = *m == -INFINITY ? 0.0f : expf(*m - mnew);
	*l = *l * alpha + (double)mk_tiles_row_exp(row, mnew, cols);
	*m = mnew;
	return alpha;
}

/* Cells of 32 scores whose bit is clear become -inf, as integer blends
 * (0xff800000 is -inf) that the vector clones do 16 at a time: a scalar
 * test per cell cost the masked kernel an eighth of its time (measured).
 * Inlined into mk_tiles_mask_row's clones: a call per 32 cells, through
 * the clones' dispatch, was half of the masking's 9 % of the masked kernel
 * (perf, n = 2048, d = 64, one thread). */
static inline __attribute__((always_inline)) void tiles_mask32(uint32_t *restrict cell,
							      uint32_t bits)
{
	for (int b = 0; b < 32; b++) {
		uint32_t keep = 0u - ((bits >> b) & 1u);
		cell[b] = (cell[b] & keep) | (0xff800000u & ~keep);
	}
}

/* The largest squared norm of rows rows of d. */
TILES_CLONES
float mk_tiles_max_norm2(const float *x, int64_t rows, int64_t d)
{
	float top = 0.0f;

	for (int64_t i = 0; i < rows; i++) {
		float a = 0.0f;
#pragma omp simd reduction(+:a)
		for (int64_t c = 0; c < d; c++)
			a += x[i * d + c] * x[i * d + c];
		top = fmaxf(top, a);
	}
	return top;
}

/* out[i] = the squared norm of row i. */
TILES_CLONES
void mk_tiles_norms2(const float *x, int64_t rows, int64_t d, float *out)
{
	for (int64_t i = 0; i < rows; i++) {
		float a = 0.0f;
#pragma omp simd reduction(+:a)
		for (int64_t c = 0; c < d; c++)
			a += x[i * d + c] * x[i * d + c];
		out[i] = a;
	}
}

#define TILES_NORM_CHUNK 256 /* rows per call: a call per row cost 2 % (measured) */

/* bound[i] = |q_i| max_j |k_j| scale >= every score of row i (Cauchy-Schwarz).
 * sgemm's rounding may leave a score above it by up to about d float32 ulps
 * of the bound: exp(s - bound) stays below e while that is under 1, so
 * larger bounds (scores of millions) are not used (*ok false). */
float *mk_tiles_bounds(const mk_attn_slice *x, bool *ok)
{
	float *bound = malloc((size_t)x->n * sizeof *bound), top = 0.0f;
	float kmax = 0.0f;
	int64_t d = x->d, C = TILES_NORM_CHUNK;
	/* on the other threads too when a slice runs alone: one thread
	 * computing them left the other waiting (measured) */
	bool par = x->n * d >= MK_TILES_BOUNDS_PARALLEL && !mk_attn_in_parallel();

	*ok = false;
	if (!bound)
		return NULL;
#pragma omp parallel for reduction(max : kmax) if (par)
	for (int64_t j = 0; j < x->kv; j += C)
		kmax = fmaxf(kmax, mk_tiles_max_norm2(x->k + j * d, x->kv - j < C ? x->kv - j : C, d));
	kmax = sqrtf(kmax) * x->scale;
#pragma omp parallel for reduction(max : top) if (par)
	for (int64_t i = 0; i < x->n; i += C) {
		int64_t rows = x->n - i < C ? x->n - i : C;
		mk_tiles_norms2(x->q + i * d, rows, d, bound + i);
		for (int64_t r = i; r < i + rows; r++) {
			bound[r] = sqrtf(bound[r]) * kmax;
			top = fmaxf(top, bound[r]);
		}
	}
	*ok = (double)top * (double)x->d * FLT_EPSILON < 1.0;
	return bound;
}

TILES_CLONES __attribute__((optimize("O3")))
void mk_tiles_mask_row(float *row, const uint64_t *w, size_t stride, int64_t j0, int64_t cols)
{
	int64_t jj = 0;

	for (; jj + 32 <= cols; jj += 32) {
		uint32_t word = mk_tiles_bits32(w, stride, j0 + jj), cell[32];
		if (word == UINT32_MAX)
			continue;
		memcpy(cell, row + jj, sizeof cell);
		tiles_mask32(cell, word);
		memcpy(row + jj, cell, sizeof cell);
	}
	for (; jj < cols; jj++) {
		int64_t j = j0 + jj;
		if (!((w[j >> 6] >> (j & 63)) & 1))
			row[jj] = -INFINITY;
	}
}
