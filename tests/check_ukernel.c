/* The CPU micro-kernels on every vector level (AVX-512, AVX2, portable)
 * and the sgemm path: their products against plain double loops at awkward
 * shapes, and every tiled kernel x normalisation against the library's
 * double-precision reference.  A level this CPU cannot run is skipped with
 * a message (it is still built, and runs where the CPU has it). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "maskkit.h"
#include "testutil.h"
#include "attn_ref.h"
#include "cpu_ukernel.h"
#include "ukernel_testutil.h"

static const char *const paths[] = {"avx512", "avx2", "portable", "blas"};
#define NPATHS 4

/* Forces path p; false (after a message) when this CPU cannot run it. */
static bool use_path(int p)
{
	if (!mk_uk_supported(paths[p])) {
		printf("check_ukernel: %s skipped: this CPU does not run it\n", paths[p]);
		return false;
	}
	ck_assert_msg(mk_uk_force(paths[p]) == MK_OK, "%s: %s", paths[p], mk_error());
	return true;
}

static float same(float x)
{
	return x;
}

START_TEST(products_match_loops)
{
	static const int64_t dims[] = {1, 3, 16, 17, 40, 64, 128};
	const mk_uk *uk;

	if (!use_path(_i) || !(uk = mk_uk_get()))
		return; /* blas has no micro-kernels */
	for (int64_t rows = 1; rows <= uk->mr; rows++) {
		const int64_t cols[] = {1, 3, uk->nr - 1, uk->nr, uk->nr + 1, 2 * uk->nr + 5, 100};
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			for (size_t k = 0; k < sizeof dims / sizeof *dims; k++)
				uk_check_products(uk, rows, cols[c], dims[k], same);
	}
	mk_uk_force(NULL);
}
END_TEST

/* qk_exp at rows x cols x d against double loops: exp(a . b - m[r]) in
 * the mask's cells (bits from j0 = 5 on, so that the words are read across
 * their boundaries; or no mask), 0 in the others, the sums accumulated.
 * holes: the mask is also clear in every odd panel of nr columns; skip:
 * qk_exp is told so (live), and skips them (their weights still 0). */
static void check_qk_exp(const mk_uk *uk, int64_t rows, int64_t cols, int64_t d, bool masked,
			 bool holes, bool skip)
{
	int64_t lds = cols + 3, sz = mk_uk_packed_size(uk, cols, d), j0 = 5;
	size_t stride = (size_t)((j0 + cols + 63) / 64 + 1);
	float *a = uk_randoms((size_t)(rows * d), 1), *b = uk_randoms((size_t)(cols * d), 2);
	float *m = uk_randoms((size_t)rows, 3), *s = malloc((size_t)(rows * lds) * sizeof *s);
	float *kp = malloc((size_t)sz * sizeof *kp), *zero = calloc((size_t)(cols + d), sizeof *zero);
	float sums[64];
	uint64_t *bits = calloc((size_t)rows * stride, sizeof *bits), seed = 9;
	const float scale = 0.375f;

	ck_assert(s && kp && zero && bits && rows <= 64);
	for (size_t k = 0; k < (size_t)rows * stride; k++)
		bits[k] = uk_seed_next(&seed) * 0x9e3779b97f4a7c15ULL;
	for (int64_t r = 0; r < rows && holes; r++)
		for (int64_t c = 0; c < cols; c++)
			if (c / uk->nr % 2)
				bits[(size_t)r * stride + (size_t)((j0 + c) >> 6)] &= ~(1ULL << ((j0 + c) & 63));
	for (int64_t k = 0; k < rows * lds; k++)
		s[k] = 12345.0f; /* the gaps past cols must stay untouched */
	for (int64_t r = 0; r < rows; r++) {
		m[r] = 2.0f * m[r] + 0.5f;
		sums[r] = 0.5f;
	}
	mk_uk_pack(uk, b, cols, d, scale, kp);
	uk->qk_exp(a, rows, kp, cols, skip ? 0x5555555555555555ULL : MK_UK_ALL, d, zero, m,
		   masked ? bits : NULL, masked ? stride : 0, j0, s, lds, sums);
	for (int64_t r = 0; r < rows; r++) {
		double total = 0.5;
		for (int64_t c = 0; c < cols; c++) {
			int64_t j = j0 + c;
			double dot = 0.0, want;
			for (int64_t p = 0; p < d; p++)
				dot += (double)a[r * d + p] * (double)(scale * b[c * d + p]);
			want = !masked || (bits[(size_t)r * stride + (size_t)(j >> 6)] >> (j & 63)) & 1
				       ? exp(dot - m[r]) : 0.0;
			total += want;
			ck_assert_msg(fabs(s[r * lds + c] - want) <= want * 1e-6 * (double)(d + 1),
				      "%s qk_exp %lldx%lldx%lld%s%s: s[%lld][%lld] = %.9g, want %.9g",
				      uk->name, (long long)rows, (long long)cols, (long long)d,
				      masked ? " masked" : "",
				      skip ? " with empty panels skipped" : holes ? " with empty panels" : "",
				      (long long)r, (long long)c,
				      (double)s[r * lds + c], want);
		}
		for (int64_t c = cols; c < lds; c++)
			ck_assert(s[r * lds + c] == 12345.0f);
		ck_assert_msg(fabs(sums[r] - total) <= 1e-5 * total, "%s qk_exp sum %.9g, want %.9g",
			      uk->name, (double)sums[r], total);
	}
	free(a), free(b), free(m), free(s), free(kp), free(zero), free(bits);
}

START_TEST(qk_exp_matches_loops)
{
	static const int64_t dims[] = {1, 17, 64};
	const mk_uk *uk;

	if (!use_path(_i) || !(uk = mk_uk_get()))
		return;
	ck_assert_ptr_nonnull(uk->qk_exp);
	for (int64_t rows = 1; rows <= uk->mr; rows++) {
		const int64_t cols[] = {1, 3, uk->nr - 1, uk->nr, uk->nr + 1, 2 * uk->nr + 5, 100};
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
				check_qk_exp(uk, rows, cols[c], dims[k], false, false, false);
				check_qk_exp(uk, rows, cols[c], dims[k], true, false, false);
				check_qk_exp(uk, rows, cols[c], dims[k], true, true, false);
				check_qk_exp(uk, rows, cols[c], dims[k], true, true, true);
			}
	}
	mk_uk_force(NULL);
}
END_TEST

/* pv with key panels marked dead in live: their weights are NaN here, so
 * a panel read that should have been skipped shows in o; the others'
 * products against double loops. */
static void check_pv_live(const mk_uk *uk, int64_t rows, int64_t cols, int64_t d, uint64_t live)
{
	int64_t lds = cols + 3, sz = mk_uk_packed_size(uk, cols, d);
	float *p = uk_randoms((size_t)(rows * lds), 3), *v = uk_randoms((size_t)(cols * d), 2);
	float *o = calloc((size_t)(rows * d), sizeof *o), *vp = malloc((size_t)sz * sizeof *vp);
	float *zero = calloc((size_t)(cols + d), sizeof *zero), *sink = malloc((size_t)d * sizeof *sink);

	ck_assert(o && vp && zero && sink);
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < cols; j++)
			if (j / uk->nr < 64 && !(live >> (j / uk->nr) & 1))
				p[r * lds + j] = NAN;
	mk_uk_pack_v(uk, v, cols, d, vp);
	uk->pv(p, lds, rows, vp, cols, live, d, zero, sink, o);
	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < d; c++) {
			double want = 0.0;
			for (int64_t j = 0; j < cols; j++)
				if (!isnan(p[r * lds + j]))
					want += (double)p[r * lds + j] * v[j * d + c];
			ck_assert_msg(fabs(o[r * d + c] - want) <= 1e-6 * (double)cols,
				      "%s pv %lldx%lldx%lld, live %#llx: o[%lld][%lld] = %.9g, want %.9g",
				      uk->name, (long long)rows, (long long)cols, (long long)d,
				      (unsigned long long)live, (long long)r, (long long)c,
				      (double)o[r * d + c], want);
		}
	free(p), free(v), free(o), free(vp), free(zero), free(sink);
}

START_TEST(pv_skips_dead_panels)
{
	/* all but the first, all but the third, alternate ones, the second only, none */
	static const uint64_t lives[] = {~1ULL, ~4ULL, 0x5555555555555555ULL, 2, 0};
	const mk_uk *uk;

	if (!use_path(_i) || !(uk = mk_uk_get()))
		return;
	for (int64_t rows = 1; rows <= uk->mr; rows++) {
		/* the last: panels past 63, which are always taken */
		const int64_t cols[] = {uk->nr, 3 * uk->nr, 3 * uk->nr + 5, 64, 100, 65 * uk->nr + 3};
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			for (size_t k = 0; k < sizeof lives / sizeof *lives; k++) {
				/* a tail only, whole chunks, chunks and a tail */
				check_pv_live(uk, rows, cols[c], 17, lives[k]);
				check_pv_live(uk, rows, cols[c], 64, lives[k]);
				check_pv_live(uk, rows, cols[c], 45, lives[k]);
			}
	}
	mk_uk_force(NULL);
}
END_TEST

/* Every tiled kernel on expr at n, d with heads heads, under the first
 * nnorms normalisations, against the reference; the block layout's tile
 * is tile. */
static void check_case_tile(const char *expr, int64_t n, int64_t d, int64_t heads,
			    size_t nnorms, int64_t tile)
{
	mk_attn_shape sh = {.batch = 1, .heads = heads, .n = n, .d = d};
	size_t len = (size_t)(sh.heads * sh.n * sh.d);
	float *q = uk_randoms(len, 11), *k = uk_randoms(len, 12), *v = uk_randoms(len, 13);
	float *o = malloc(len * sizeof *o);
	int64_t rows[MK_REF_MAX_ROWS], nrows = mk_attn_ref_rows(sh.n, rows);
	double *ref = malloc((size_t)(sh.heads * nrows * sh.d) * sizeof *ref);
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;

	ck_assert_msg(mk_expr_parse(expr, &e) == MK_OK &&
			      mk_expr_bind(e, &(mk_bind_opts){.n = sh.n, .seed = 7}) == MK_OK &&
			      mk_expr_to_mask(e, &m) == MK_OK && mk_attn_layout_new(m, tile, 0, &l) == MK_OK,
		      "%s: %s", expr, mk_error());
	for (size_t nk = 0; nk < nnorms; nk++)
		for (int kern = 0; kern < MK_KERNEL_COUNT; kern++) {
			const mk_mask *rm = kern == MK_KERNEL_DENSE ? NULL : m;
			mk_attn_stats st;
			double err;
			ck_assert(mk_attn_reference(&uk_norms[nk], &sh, q, k, v, rm, rows, nrows, ref) ==
				  MK_OK);
			for (size_t c = 0; c < len; c++) /* a row left unwritten is NaN, not the last kernel's */
				o[c] = NAN;
			ck_assert_msg(mk_attn_run(mk_attn_backend_get("cpu"), (mk_attn_kernel)kern,
						  &uk_norms[nk], &sh, q, k, v, l, o, &st) == MK_OK,
				      "%s", mk_error());
			err = mk_attn_ref_error(&sh, rows, nrows, ref, o);
			/* every element, not only the reference's rows: `maskkit
			 * attn` does not zero O before the kernel (attn_files.c) */
			for (size_t c = 0; c < len; c++)
				ck_assert_msg(isfinite(o[c]), "%s, norm %zu, '%s': O[%zu] unwritten",
					      mk_attn_kernel_name((mk_attn_kernel)kern), nk, expr, c);
			ck_assert_msg(err <= 1e-5, "%s, %s, norm %zu, '%s' n=%lld d=%lld heads %lld: "
				      "error %.3g", mk_uk_get() ? mk_uk_get()->name : "blas",
				      mk_attn_kernel_name((mk_attn_kernel)kern), nk, expr, (long long)sh.n,
				      (long long)sh.d, (long long)heads, err);
		}
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	free(q), free(k), free(v), free(o), free(ref);
}

static void check_case(const char *expr, int64_t n, int64_t d, int64_t heads, size_t nnorms)
{
	check_case_tile(expr, n, d, heads, nnorms, 64);
}

/* _i = path x shape */
START_TEST(kernels_match_reference_on_every_path)
{
	if (!use_path(_i / UK_NSHAPES))
		return;
	check_case(uk_shapes[_i % UK_NSHAPES].expr, uk_shapes[_i % UK_NSHAPES].n,
		   uk_shapes[_i % UK_NSHAPES].d, 2, UK_NNORMS);
	mk_uk_force(NULL);
}
END_TEST

/* softmax over many heads runs their items as one list (cpu_heads.c), K and
 * V packed into two buffers taken in turn: five heads reuse each, on one
 * thread and on two, with 6 items a head and with 1, and with a global row
 * of 19 tiles split in two items (block), whose pieces' states take two
 * sets in turn too, merged by the thread that finishes the last piece;
 * then three such rows (tiles 0, 9 and 18), each found by its slots.
 * _i = path x thread count. */
START_TEST(many_heads_on_every_path)
{
	if (!use_path(_i / 2))
		return;
#ifdef _OPENMP
	int threads = omp_get_max_threads();
	omp_set_num_threads(_i % 2 + 1);
#endif
	check_case("local3 + random2", 333, 48, 5, 1);
	check_case("causal", 200, 40, 3, 1);
	check_case("local40 + global1", 1200, 24, 5, 1);
	check_case("local40 + global(tokens=0,600,1199)", 1200, 16, 3, 1);
	/* tiles of 48: a row's block spans two words of its bits; row 47,
	 * the last of its strip, is the strip's only one with an entry in
	 * block 1 (the block kernel skips a strip's empty blocks) */
	check_case_tile("local1", 150, 16, 2, 1, 48);
	/* a band's corners: panels of a partial block with no entry for a
	 * strip, which the block kernel skips; n <= MK_REF_MAX_ROWS, so every
	 * row is compared */
	check_case_tile("local40 + global1", 500, 24, 2, 1, 64);
	check_case_tile("local40 + global1", 500, 24, 2, 1, 48);
#ifdef _OPENMP
	omp_set_num_threads(threads);
#endif
	mk_uk_force(NULL);
}
END_TEST

/* mk_attn_run_progress: what a call says is final is: the slices
 * reported are copied at once, and the copies equal the output at the end. */
typedef struct progress_log {
	const float *o;
	float *copy;
	int64_t slice, done, calls;
	bool backwards; /* noted here, asserted by the test's thread */
} progress_log;

static void progress_copy(int64_t done, int64_t slices, void *arg)
{
	progress_log *g = arg;

	g->backwards |= done <= g->done || done > slices;
	if (g->backwards)
		return;
	memcpy(g->copy + g->done * g->slice, g->o + g->done * g->slice,
	       (size_t)((done - g->done) * g->slice) * sizeof(float));
	g->done = done;
	g->calls++;
}

/* _i: 0 softmax over many slices at once (cpu_heads.c), 1 slice by slice
 * (sinkhorn), 2 small slices spread over the threads, 3 as 0 on the block
 * kernel with a split global row (a slice is final once it is merged) */
START_TEST(progress_reports_final_slices)
{
	static const struct {
		int64_t n, d;
		mk_norm norm;
		const char *expr; /* the block kernel's mask, or NULL: dense */
	} c[] = {{300, 32, {.kind = MK_NORM_SOFTMAX}, NULL},
		 {300, 32, {.kind = MK_NORM_SINKHORN, .iters = 2}, NULL},
		 {40, 16, {.kind = MK_NORM_SOFTMAX}, NULL},
		 {1200, 16, {.kind = MK_NORM_SOFTMAX}, "local40 + global1"}};
	mk_attn_shape sh = {.batch = 2, .heads = 3, .n = c[_i].n, .d = c[_i].d};
	size_t len = (size_t)(6 * sh.n * sh.d);
	float *q = uk_randoms(len, 21), *k = uk_randoms(len, 22), *v = uk_randoms(len, 23);
	float *o = malloc(len * sizeof *o), *copy = malloc(len * sizeof *copy);
	progress_log g = {.o = o, .copy = copy, .slice = sh.n * sh.d};
	mk_attn_stats st;
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;

	if (c[_i].expr)
		ck_assert_msg(mk_expr_parse(c[_i].expr, &e) == MK_OK &&
				      mk_expr_bind(e, &(mk_bind_opts){.n = sh.n}) == MK_OK &&
				      mk_expr_to_mask(e, &m) == MK_OK &&
				      mk_attn_layout_new(m, 64, 0, &l) == MK_OK,
			      "%s", mk_error());
	ck_assert_msg(mk_attn_run_progress(mk_attn_backend_get("cpu"),
					   l ? MK_KERNEL_BLOCK : MK_KERNEL_DENSE, &c[_i].norm, &sh,
					   q, k, v, l, o, &st, progress_copy, &g) == MK_OK,
		      "%s", mk_error());
	ck_assert_int_eq(g.done, 6);
	ck_assert(!g.backwards && g.calls >= 1);
	ck_assert(memcmp(copy, o, len * sizeof *o) == 0);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	free(q), free(k), free(v), free(o), free(copy);
}
END_TEST

START_TEST(force_rejects_unknown)
{
	ck_assert_int_ne(mk_uk_force("avx9000"), MK_OK);
	ck_assert_ptr_nonnull(strstr(mk_error(), "avx9000"));
	ck_assert(mk_uk_supported("portable"));
}
END_TEST

static Suite *ukernel_suite(void)
{
	Suite *s = suite_create("ukernel");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, products_match_loops, 0, NPATHS);
	tcase_add_loop_test(tc, qk_exp_matches_loops, 0, NPATHS);
	tcase_add_loop_test(tc, pv_skips_dead_panels, 0, NPATHS);
	tcase_add_loop_test(tc, kernels_match_reference_on_every_path, 0, NPATHS * UK_NSHAPES);
	tcase_add_loop_test(tc, many_heads_on_every_path, 0, 2 * NPATHS);
	tcase_add_loop_test(tc, progress_reports_final_slices, 0, 4);
	tcase_add_test(tc, force_rejects_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(ukernel_suite());
}
