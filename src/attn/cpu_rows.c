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
	union { float f; int32_t i; } p2;
	float xc = x < lo ? lo : x;
	float t = xc * 1.44269504088896341f;
	float nf = (t + 12582912.0f) - 12582912.0f; /* round to nearest */
	float f = t - nf, y;
	int32_t e = (int32_t)nf + 127;

	y = 1.326302532e-3f;
	y = y * f + 9.671429172e-3f;
	y = y * f + 5.550738797e-2f;
	y = y * f + 2.402224392e-1f;
	y = y * f + 6.931470037e-1f;
	y = y * f + 1.0f; /* exp(0) = 1 exactly: equal scores give exact shares */
	p2.i = (e > 1 ? e : 0) * (1 << 23); /* 2^n, or 0 below 2^-125 */
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
 * test per cell cost the masked kernel an eighth of its time (measured). */
TILES_CLONES __attribute__((optimize("O3", "fp-contract=fast")))
static void tiles_mask32(uint32_t *restrict cell, uint32_t bits)
{
	for (int b = 0; b < 32; b++) {
		uint32_t keep = 0u - ((bits >> b) & 1u);
		cell[b] = (cell[b] & keep) | (0xff800000u & ~keep);
	}
}

/* The squared norm of a row of d. */
TILES_CLONES
float mk_tiles_norm2(const float *x, int64_t d)
{
	float a = 0.0f;

#pragma omp simd reduction(+:a)
	for (int64_t c = 0; c < d; c++)
		a += x[c] * x[c];
	return a;
}

/* bound[i] = |q_i| max_j |k_j| scale >= every score of row i (Cauchy-Schwarz).
 * sgemm's rounding may leave a score above it by up to about d float32 ulps
 * of the bound: exp(s - bound) stays below e while that is under 1, so
 * larger bounds (scores of millions) are not used (*ok false). */
float *mk_tiles_bounds(const mk_attn_slice *x, bool *ok)
{
	float *bound = malloc((size_t)x->n * sizeof *bound), top = 0.0f;
	float kmax = 0.0f;

	*ok = false;
	if (!bound)
		return NULL;
	for (int64_t j = 0; j < x->kv; j++)
		kmax = fmaxf(kmax, mk_tiles_norm2(x->k + j * x->d, x->d));
	kmax = sqrtf(kmax) * x->scale;
	for (int64_t i = 0; i < x->n; i++) {
		bound[i] = sqrtf(mk_tiles_norm2(x->q + i * x->d, x->d)) * kmax;
		top = fmaxf(top, bound[i]);
	}
	*ok = (double)top * (double)x->d * FLT_EPSILON < 1.0;
	return bound;
}


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
