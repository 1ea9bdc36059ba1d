/*
 * OpenBLAS loaded on first use.  Linked, it costs every start a few
 * milliseconds (libgfortran, its thread pool started before main) although
 * most commands never multiply a matrix; so libmaskkit does not link it and
 * defines here, under their own names, the few functions it calls, each
 * forwarding to OpenBLAS's, looked up the first time one is called (or
 * mk_blas_room, which callers call first and which reports a failure as an
 * error).  These names stay inside libmaskkit.so (libmaskkit.sym exports
 * mk_* only), and the program exports none either since GSL, whose calls
 * they once served there, is loaded on first use too (analysis/gsl_lazy.h):
 * GSL's own cblas, libgslcblas, serves all of GSL's.  A function added to
 * the calls needs its line in BLAS_FUNCS below, or libmaskkit.so fails to
 * link (-no-undefined).
 *
 * OpenBLAS reads OPENBLAS_NUM_THREADS and OPENBLAS_THREAD_TIMEOUT when it is
 * loaded, which is now after main() has started: the program sets them in
 * place (src/cli/main.c) instead of restarting.
 */
#include "config.h"
#if MK_LAZY_BLAS
#include <dlfcn.h>
#include <cblas.h>
#include "core.h"
#include "internal.h"
#include "lazy.h"

#define BLAS_FUNCS(X) \
	X(cblas_sgemm) X(cblas_dgemm) X(cblas_dsyrk) X(openblas_get_num_threads) \
	X(openblas_set_num_threads)

static struct {
#define BLAS_MEMBER(f) __typeof__(&f) f;
	BLAS_FUNCS(BLAS_MEMBER)
#undef BLAS_MEMBER
} blas_api;

static const char *const blas_files[] = {MK_OPENBLAS_SONAME, MK_OPENBLAS_PATH, NULL};
static mk_lazy_state blas_state = MK_LAZY_STATE_INIT;

static void blas_fill(void)
{
	mk_lazy_lib lib = {.what = "OpenBLAS", .files = blas_files, .flags = RTLD_NOW | RTLD_LOCAL};
	const char *file;
	void *h = mk_lazy_open(&lib, &file);

	if (!h)
		goto out;
#define BLAS_GET(f) \
	if (!(blas_api.f = (__typeof__(blas_api.f))mk_lazy_sym(h, file, #f))) \
		goto out;
	BLAS_FUNCS(BLAS_GET)
#undef BLAS_GET
	return;
out:
	mk_lazy_failed(&blas_state);
}

int mk_blas_load(void)
{
	return mk_lazy_load(&blas_state, blas_fill);
}

/* A BLAS call that no mk_blas_room preceded, with OpenBLAS missing: no
 * status to return it through (mk_lazy_need). */
static void blas_need(void)
{
	mk_lazy_need(&blas_state, blas_fill);
}

void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_TRANSPOSE ta,
		 OPENBLAS_CONST enum CBLAS_TRANSPOSE tb, OPENBLAS_CONST blasint m,
		 OPENBLAS_CONST blasint n, OPENBLAS_CONST blasint k, OPENBLAS_CONST float alpha,
		 OPENBLAS_CONST float *a, OPENBLAS_CONST blasint lda, OPENBLAS_CONST float *b,
		 OPENBLAS_CONST blasint ldb, OPENBLAS_CONST float beta, float *c,
		 OPENBLAS_CONST blasint ldc)
{
	blas_need();
	blas_api.cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_dgemm(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_TRANSPOSE ta,
		 OPENBLAS_CONST enum CBLAS_TRANSPOSE tb, OPENBLAS_CONST blasint m,
		 OPENBLAS_CONST blasint n, OPENBLAS_CONST blasint k, OPENBLAS_CONST double alpha,
		 OPENBLAS_CONST double *a, OPENBLAS_CONST blasint lda, OPENBLAS_CONST double *b,
		 OPENBLAS_CONST blasint ldb, OPENBLAS_CONST double beta, double *c,
		 OPENBLAS_CONST blasint ldc)
{
	blas_need();
	blas_api.cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_dsyrk(OPENBLAS_CONST enum CBLAS_ORDER order, OPENBLAS_CONST enum CBLAS_UPLO uplo,
		 OPENBLAS_CONST enum CBLAS_TRANSPOSE t, OPENBLAS_CONST blasint n,
		 OPENBLAS_CONST blasint k, OPENBLAS_CONST double alpha, OPENBLAS_CONST double *a,
		 OPENBLAS_CONST blasint lda, OPENBLAS_CONST double beta, double *c,
		 OPENBLAS_CONST blasint ldc)
{
	blas_need();
	blas_api.cblas_dsyrk(order, uplo, t, n, k, alpha, a, lda, beta, c, ldc);
}

int openblas_get_num_threads(void)
{
	blas_need();
	return blas_api.openblas_get_num_threads();
}

void openblas_set_num_threads(int num_threads)
{
	blas_need();
	blas_api.openblas_set_num_threads(num_threads);
}
#else
#include "internal.h"

int mk_blas_load(void)
{
	return MK_OK; /* linked */
}
#endif
