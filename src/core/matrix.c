/*
 * Dense double matrices for the weight analyses, and the Gram matrix
 * through CBLAS.  dsyrk computes one triangle with half the flops of a
 * general product; the other triangle is mirrored in a cache-friendly
 * blocked pass so callers get an ordinary full matrix.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "weights.h"
#include "internal.h"

#define MK_MIRROR_BLOCK 64

int mk_matrix_new(int64_t rows, int64_t cols, uint64_t max_memory, const char *what,
		  mk_matrix *out)
{
	uint64_t count, bytes;
	int ret;

	memset(out, 0, sizeof *out);
	if (rows <= 0 || cols <= 0)
		return mk_error_set(MK_EINVAL, "%s: empty matrix (%lld x %lld)", what,
				    (long long)rows, (long long)cols);
	if (mk_mul_u64((uint64_t)rows, (uint64_t)cols, &count) ||
	    mk_mul_u64(count, sizeof(double), &bytes) || bytes > SIZE_MAX)
		return mk_error_set(MK_ERANGE, "%s: %lld x %lld doubles overflow the address space",
				    what, (long long)rows, (long long)cols);
	ret = mk_check_memory(bytes, max_memory, what);
	if (ret)
		return ret;
	out->data = calloc((size_t)count, sizeof(double));
	if (!out->data)
		return mk_error_set(MK_ENOMEM, "%s: cannot allocate %llu bytes", what,
				    (unsigned long long)bytes);
	out->rows = rows;
	out->cols = cols;
	return MK_OK;
}

void mk_matrix_release(mk_matrix *m)
{
	if (!m)
		return;
	free(m->data);
	memset(m, 0, sizeof *m);
}

/* Copies the lower triangle to the upper one, a block pair at a time. */
static void mk_matrix_mirror_lower(double *p, int64_t n)
{
	#pragma omp parallel for schedule(dynamic, 1)
	for (int64_t bi = 0; bi < n; bi += MK_MIRROR_BLOCK)
		for (int64_t bj = 0; bj <= bi; bj += MK_MIRROR_BLOCK) {
			int64_t iend = bi + MK_MIRROR_BLOCK < n ? bi + MK_MIRROR_BLOCK : n;
			int64_t jend = bj + MK_MIRROR_BLOCK < n ? bj + MK_MIRROR_BLOCK : n;
			for (int64_t i = bi; i < iend; i++)
				for (int64_t j = bj; j < jend && j < i; j++)
					p[j * n + i] = p[i * n + j];
		}
}

int mk_matrix_gram(const mk_matrix *e, uint64_t max_memory, mk_matrix *p)
{
	int ret;

	if (e->rows > INT32_MAX || e->cols > INT32_MAX)
		return mk_error_set(MK_ERANGE, "matrix of %lld x %lld is too large for BLAS",
				    (long long)e->rows, (long long)e->cols);
	ret = mk_blas_room(1);
	if (ret == MK_OK)
		ret = mk_matrix_new(e->rows, e->rows, max_memory, "the Gram matrix", p);
	if (ret)
		return ret;
	cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)e->rows, (int)e->cols, 1.0,
		    e->data, (int)e->cols, 0.0, p->data, (int)e->rows);
	mk_matrix_mirror_lower(p->data, e->rows);
	return MK_OK;
}
