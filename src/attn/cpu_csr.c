/* The element-sparse (CSR) CPU kernel: scores are computed only at the
 * mask's entries (SDDMM), normalised per row in the log domain, then
 * multiplied into V (sparse x dense).  Work is O(nnz * d) however the
 * entries are scattered, which is what the tile kernels cannot promise.
 *
 * Rows are independent, so the row pass runs them in parallel with dynamic
 * scheduling (row lengths vary wildly between patterns).  The column pass
 * needs each column's rows: the layout keeps only rows, so a transposed
 * index is built per call (a parallel counting sort, O(nnz)), which keeps
 * the result independent of the thread count, unlike merging per-thread
 * partial sums.  Dot products and sums are accumulated in double: a
 * widened multiply-add per product costs little next to gathering the key
 * rows, and it keeps the kernel well inside the 1e-5 agreement the
 * backends are tested to. */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "attn_internal.h"

/* The hot loops are also compiled for AVX2 and AVX-512; the loader picks
 * the best the CPU has (as in bits.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CSR_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CSR_HOT
#endif
/* The helpers of the hot loops must be inlined into each clone to be
 * compiled for its instruction set. */
#if defined(__GNUC__)
#define CSR_INLINE static inline __attribute__((always_inline))
#else
#define CSR_INLINE static inline
#endif

static int csr_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

static int csr_thread(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

CSR_INLINE double csr_dot(const double *a, const float *b, int64_t d)
{
	double s = 0;
#pragma omp simd reduction(+ : s)
	for (int64_t t = 0; t < d; t++)
		s += a[t] * (double)b[t];
	return s;
}

/* Four dot products against one a at once: four independent add chains
 * instead of one long one, and each a[t] loaded once. */
CSR_INLINE void csr_dot4(const double *a, const float *b0, const float *b1, const float *b2,
			const float *b3, int64_t d, double out[4])
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
	for (int64_t t = 0; t < d; t++) {
		s0 += a[t] * (double)b0[t];
		s1 += a[t] * (double)b1[t];
		s2 += a[t] * (double)b2[t];
		s3 += a[t] * (double)b3[t];
	}
	out[0] = s0;
	out[1] = s1;
	out[2] = s2;
	out[3] = s3;
}

/* a = scale * x, widened and scaled once per row rather than per entry. */
CSR_INLINE void csr_widen(double *a, const float *x, double scale, int64_t d)
{
#pragma omp simd
	for (int64_t t = 0; t < d; t++)
		a[t] = scale * (double)x[t];
}

/* Scratch shared by the passes, one slice per thread. */
typedef struct csr_scratch {
	double *buf;
	size_t per_thread;
} csr_scratch;

static int csr_scratch_new(csr_scratch *s, size_t per_thread)
{
	size_t threads = (size_t)csr_threads();
	s->per_thread = per_thread;
	s->buf = NULL;
	if (per_thread > SIZE_MAX / sizeof(double) / threads)
		return mk_error_set(MK_ERANGE, "CSR kernel scratch of %zu doubles overflows",
				    per_thread);
	s->buf = malloc(threads * per_thread * sizeof(double));
	if (!s->buf)
		return mk_error_set(MK_ENOMEM, "out of memory for CSR kernel scratch");
	return MK_OK;
}

static double *csr_scratch_mine(const csr_scratch *s)
{
	return s->buf + (size_t)csr_thread() * s->per_thread;
}

static int csr_check(const mk_attn_slice *x, const char *pass)
{
	if (!x || !x->mask || !x->q || !x->k)
		return mk_error_set(MK_EINVAL, "the CSR %s pass needs q, k and a mask", pass);
	if (x->mask->n != x->n || x->mask->kv != x->kv || x->n < 1 || x->d < 1)
		return mk_error_set(MK_EINVAL,
				    "CSR %s pass: mask n = %" PRId64 " for a slice of n = %" PRId64
				    ", d = %" PRId64, pass, x->mask->n, x->n, x->d);
	return MK_OK;
}

/* w[e] = a . k[idx[e]] for the cnt rows of k listed in idx. */
CSR_INLINE void csr_scores(const double *a, const float *k, const int32_t *idx, int64_t cnt,
			  int64_t d, double *w)
{
	int64_t e = 0;
	for (; e + 4 <= cnt; e += 4)
		csr_dot4(a, k + (int64_t)idx[e] * d, k + (int64_t)idx[e + 1] * d,
			 k + (int64_t)idx[e + 2] * d, k + (int64_t)idx[e + 3] * d, d, w + e);
	for (; e < cnt; e++)
		w[e] = csr_dot(a, k + (int64_t)idx[e] * d, d);
}

/* acc = sum_e w[e] v[idx[e]], four rows of v per sweep over acc so that
 * acc is loaded and stored a quarter as often. */
CSR_INLINE void csr_gather(const double *w, const float *v, const int32_t *idx, int64_t cnt,
			   int64_t d, double *acc)
{
	int64_t e = 0;
	memset(acc, 0, (size_t)d * sizeof *acc);
	for (; e + 4 <= cnt; e += 4) {
		const float *v0 = v + (int64_t)idx[e] * d, *v1 = v + (int64_t)idx[e + 1] * d;
		const float *v2 = v + (int64_t)idx[e + 2] * d, *v3 = v + (int64_t)idx[e + 3] * d;
		double p0 = w[e], p1 = w[e + 1], p2 = w[e + 2], p3 = w[e + 3];
#pragma omp simd
		for (int64_t t = 0; t < d; t++)
			acc[t] += (p0 * (double)v0[t] + p1 * (double)v1[t]) +
				  (p2 * (double)v2[t] + p3 * (double)v3[t]);
	}
	for (; e < cnt; e++) {
		const float *v0 = v + (int64_t)idx[e] * d;
		double p0 = w[e];
#pragma omp simd
		for (int64_t t = 0; t < d; t++)
			acc[t] += p0 * (double)v0[t];
	}
}

/* Shifts the scores w[e] by -shift[idx[e]] (shift NULL: 0), replaces them
 * with exp(w[e] - max) and returns LSE_e w[e] (-inf when there is none);
 * *sum gets sum_e exp(w[e] - max), the normaliser of the new w.
 * A shift of -inf marks an empty row or column, which has no entries: such
 * an entry gets weight 0 rather than turning the sum into inf - inf. */
CSR_INLINE double csr_lse(double *w, const int32_t *idx, int64_t cnt, const float *shift,
			  double *sum)
{
	double mx = -INFINITY;
	*sum = 0;
	for (int64_t e = 0; e < cnt && shift; e++)
		w[e] = shift[idx[e]] == -INFINITY ? -INFINITY : w[e] - shift[idx[e]];
	for (int64_t e = 0; e < cnt; e++)
		mx = w[e] > mx ? w[e] : mx;
	if (mx == -INFINITY)
		return -INFINITY;
	for (int64_t e = 0; e < cnt; e++) {
		w[e] = exp(w[e] - mx);
		*sum += w[e];
	}
	return mx + log(*sum);
}

/* The most entries in one row of a CSR index ptr with n rows. */
static int64_t csr_longest(const int64_t *ptr, int64_t n)
{
	int64_t most = 0;
	for (int64_t i = 0; i < n; i++)
		most = ptr[i + 1] - ptr[i] > most ? ptr[i + 1] - ptr[i] : most;
	return most;
}

/* Row i: f_i = LSE_j (s_ij - g_j), and with acc set o_i = sum_j pi_ij v_j.
 * w holds the row's exponentials (up to n), a the scaled query. */
static CSR_HOT void csr_row(const mk_attn_slice *x, int64_t i, const float *g, float *f,
			    double *w, double *a, double *acc)
{
	const mk_attn_layout *l = x->mask;
	const int32_t *col = l->col + l->ptr[i];
	int64_t cnt = l->ptr[i + 1] - l->ptr[i], d = x->d;
	double lse, sum;
	csr_widen(a, x->q + i * d, x->scale, d);
	csr_scores(a, x->k, col, cnt, d, w);
	lse = csr_lse(w, col, cnt, g, &sum);
	f[i] = (float)lse;
	if (!acc)
		return;
	if (lse == -INFINITY) {
		memset(x->o + i * d, 0, (size_t)d * sizeof *x->o);
		return;
	}
	/* pi = exp(s - g - max) / sum: no second exp per entry */
	sum = 1.0 / sum;
	for (int64_t e = 0; e < cnt; e++)
		w[e] *= sum;
	csr_gather(w, x->v, col, cnt, d, acc);
	for (int64_t t = 0; t < d; t++)
		x->o[i * d + t] = (float)acc[t];
}

/* Small slices run on one thread: waking the others costs more. */
static bool csr_parallel(const mk_attn_slice *x)
{
	return x->mask->nnz * (uint64_t)x->d >= ((uint64_t)1 << 18);
}

int mk_cpu_csr_row_pass(const mk_attn_slice *x, const float *g, float *f, bool with_v)
{
	csr_scratch s;
	int64_t maxrow;
	int ret;
	if ((ret = csr_check(x, "row")))
		return ret;
	if (with_v && (!x->v || !x->o))
		return mk_error_set(MK_EINVAL, "the CSR row pass needs v and o to apply v");
	maxrow = csr_longest(x->mask->ptr, x->n);
	if ((ret = csr_scratch_new(&s, (size_t)maxrow + 2 * (size_t)x->d)))
		return ret;
#pragma omp parallel for schedule(dynamic, 8) if (csr_parallel(x))
	for (int64_t i = 0; i < x->n; i++) {
		double *w = csr_scratch_mine(&s), *a = w + maxrow;
		csr_row(x, i, g, f, w, a, with_v ? a + x->d : NULL);
	}
	free(s.buf);
	return MK_OK;
}

/* The transposed index: column j's rows are row[cptr[j] .. cptr[j+1]-1],
 * in increasing order. */
typedef struct csr_cols {
	int64_t *cptr;
	int32_t *row;
} csr_cols;

/* Splits the rows into `parts` ranges of about equal entry counts: part p
 * is rows [csr_split(p), csr_split(p + 1)). */
static int64_t csr_split(const mk_attn_layout *l, int p, int parts)
{
	/* nnz <= 2^40 and p <= threads, so the product cannot wrap */
	uint64_t target = l->nnz * (uint64_t)p / (uint64_t)parts;
	int64_t lo = 0, hi = l->n;
	if (p >= parts)
		return l->n;
	while (lo < hi) { /* first row starting at or after target */
		int64_t mid = lo + (hi - lo) / 2;
		if ((uint64_t)l->ptr[mid] < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Each thread counts the columns of its own range of rows; per-thread
 * offsets then let it scatter its rows after those of the threads before
 * it, so every column's rows come out sorted whatever the thread count. */
static void csr_transpose_fill(const mk_attn_layout *l, int64_t *cnt, csr_cols *c)
{
	int64_t n = l->kv; /* columns */
#pragma omp parallel if (l->nnz >= ((uint64_t)1 << 16))
	{
		int parts = 1, me = csr_thread();
#ifdef _OPENMP
		parts = omp_get_num_threads();
#endif
		int64_t lo = csr_split(l, me, parts), hi = csr_split(l, me + 1, parts);
		int64_t *mine = cnt + (size_t)me * (size_t)n;
		memset(mine, 0, (size_t)n * sizeof *mine);
		for (int64_t e = l->ptr[lo]; e < l->ptr[hi]; e++)
			mine[l->col[e]]++;
#pragma omp barrier
#pragma omp single
		{
			int64_t at = 0;
			for (int64_t j = 0; j < n; j++) {
				c->cptr[j] = at;
				for (int t = 0; t < parts; t++) {
					int64_t k = cnt[(size_t)t * (size_t)n + (size_t)j];
					cnt[(size_t)t * (size_t)n + (size_t)j] = at;
					at += k;
				}
			}
			c->cptr[n] = at;
		}
		for (int64_t i = lo; i < hi; i++)
			for (int64_t e = l->ptr[i]; e < l->ptr[i + 1]; e++)
				c->row[mine[l->col[e]]++] = (int32_t)i;
	}
}

/* Builds c; on failure the caller still frees what c holds. */
static int csr_transpose(const mk_attn_layout *l, csr_cols *c)
{
	size_t threads = (size_t)csr_threads(), nnz = l->nnz ? (size_t)l->nnz : 1;
	int64_t *cnt = NULL;
	int ret = MK_OK;
	c->cptr = malloc(((size_t)l->kv + 1) * sizeof *c->cptr);
	c->row = malloc(nnz * sizeof *c->row);
	cnt = malloc(threads * (size_t)l->kv * sizeof *cnt);
	if (!c->cptr || !c->row || !cnt) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the CSR column index");
		goto out;
	}
	csr_transpose_fill(l, cnt, c);
out:
	free(cnt);
	return ret;
}

int mk_attn_csr_transpose(const mk_attn_layout *l, int64_t **cptr, int32_t **row)
{
	csr_cols c = {0};
	int ret = csr_transpose(l, &c);
	if (ret) {
		free(c.cptr);
		free(c.row);
		c.cptr = NULL;
		c.row = NULL;
	}
	*cptr = c.cptr;
	*row = c.row;
	return ret;
}

/* Column j: g_j = LSE_i (s_ij - f_i), the row pass's computation with the
 * roles of q and k swapped. */
static CSR_HOT void csr_col(const mk_attn_slice *x, const csr_cols *c, int64_t j, const float *f,
			    float *g, double *w, double *a)
{
	const int32_t *row = c->row + c->cptr[j];
	int64_t cnt = c->cptr[j + 1] - c->cptr[j], d = x->d;
	double sum;
	csr_widen(a, x->k + j * d, x->scale, d);
	csr_scores(a, x->q, row, cnt, d, w);
	g[j] = (float)csr_lse(w, row, cnt, f, &sum);
}

int mk_cpu_csr_col_pass(const mk_attn_slice *x, const float *f, float *g)
{
	csr_scratch s = {0};
	csr_cols c = {0};
	int64_t maxcol;
	int ret;
	if ((ret = csr_check(x, "column")))
		return ret;
	if ((ret = csr_transpose(x->mask, &c)))
		goto out;
	maxcol = csr_longest(c.cptr, x->kv);
	if ((ret = csr_scratch_new(&s, (size_t)maxcol + (size_t)x->d)))
		goto out;
#pragma omp parallel for schedule(dynamic, 8) if (csr_parallel(x))
	for (int64_t j = 0; j < x->kv; j++) {
		double *w = csr_scratch_mine(&s);
		csr_col(x, &c, j, f, g, w, w + maxcol);
	}
out:
	free(s.buf);
	free(c.cptr);
	free(c.row);
	return ret;
}
