/* Unit tests of `maskkit heads`' numbers and roles: known answers on hand-made
 * blocks (every row on key i - 1: prev 1 and a previous-token role; uniform
 * rows: entropy ln len, entropy / ln len 1 and a broad role; [CLS] only:
 * a sink), the mass on punctuation keys, padding that must not count, the
 * thresholds' order and NaN, sorting and its errors, and a whole file read
 * through the data-set reader. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "head_roles.h"
#include "h5testutil.h"

enum { T_PREV, T_UNIFORM, T_CLS, T_HEADS };

/* T_HEADS x n x n floats: head T_PREV puts row i on key i - 1 (row 0 on
 * itself), T_UNIFORM 1/len everywhere, T_CLS everything on key 0; padding
 * NaN, which must never be read. */
static float *test_block(int64_t n, int64_t len)
{
	float *p = malloc((size_t)(T_HEADS * n * n) * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (int64_t k = 0; k < T_HEADS * n * n; k++)
		p[k] = NAN;
	for (int64_t i = 0; i < len; i++)
		for (int64_t j = 0; j < len; j++) {
			p[(T_PREV * n + i) * n + j] = j == (i ? i - 1 : 0);
			p[(T_UNIFORM * n + i) * n + j] = 1.0f / (float)len;
			p[(T_CLS * n + i) * n + j] = j == 0;
		}
	return p;
}

/* One sample of length len (n stored) through the accumulator; kp marks
 * punctuation keys (or NULL); the mean map of size m. */
static void test_rows(int64_t n, int64_t len, int64_t m, const uint8_t *kp, mk_head_row *rows)
{
	float *p = test_block(n, len);
	mk_head_acc *a;
	mk_dataset_block b = {.sample = 0, .layer = 0, .heads = T_HEADS, .n = n, .len = len, .p = p};
	mk_head_thresholds t = {MK_HEAD_PREV, MK_HEAD_NEXT, MK_HEAD_BAND, MK_HEAD_SINK,
				MK_HEAD_BROAD};

	ck_assert_int_eq(mk_head_acc_new(1, T_HEADS, n, m, 0.9, 0, &a), MK_OK);
	ck_assert_int_eq(mk_head_acc_add(a, &b, kp), MK_OK);
	ck_assert_int_eq(mk_head_acc_finish(a, 1, 1, 2, kp != NULL, rows), MK_OK);
	for (int h = 0; h < T_HEADS; h++)
		rows[h].role = mk_head_classify(&rows[h], &t);
	mk_head_acc_free(a);
	free(p);
}

/* len 16 of n 20: powers of two keep 1/len exact. */
START_TEST(test_known_answers)
{
	mk_head_row r[T_HEADS];
	const mk_head_row *pv = &r[T_PREV], *u = &r[T_UNIFORM], *c = &r[T_CLS];

	test_rows(20, 16, 8, NULL, r);
	/* previous token: rows 1..15 all on i - 1, row 0 on itself */
	ck_assert_double_eq(pv->prev, 1.0);
	ck_assert_double_eq(pv->next, 0.0);
	ck_assert_double_eq(pv->diag, 1.0 / 16);
	ck_assert_double_eq(pv->band, 1.0);
	ck_assert_double_eq(pv->cls, 2.0 / 16);
	ck_assert_double_eq(pv->entropy, 0.0);
	ck_assert_double_eq(pv->sparsity, 1.0 - 16.0 / 256);
	/* the 8 x 8 mean map: the subdiagonal and cell (0, 0); the diagonal's fit
	 * 1/8 leaves RSS 7/8 of TSS 7 */
	ck_assert_double_eq_tol(pv->toeplitz_r2, 0.875, 1e-12);
	ck_assert(isnan(pv->punct));
	ck_assert_int_eq(pv->role, MK_ROLE_PREV);
	/* uniform: entropy ln 16, its share of ln len 1; band 74 of 256 cells */
	ck_assert_double_eq(u->prev, 1.0 / 16);
	ck_assert_double_eq(u->band, 74.0 / 256);
	ck_assert_double_eq_tol(u->entropy, log(16.0), 1e-14);
	ck_assert_double_eq_tol(u->entropy_norm, 1.0, 1e-14);
	ck_assert_double_eq(u->sparsity, 1.0 - 15.0 / 16); /* ceil(0.9 x 16) keys a row */
	ck_assert_double_eq(u->toeplitz_r2, 1.0);
	ck_assert_int_eq(u->role, MK_ROLE_BROAD);
	/* [CLS] only: a sink */
	ck_assert_double_eq(c->cls, 1.0);
	ck_assert_double_eq(c->sep, 0.0);
	ck_assert_int_eq(c->role, MK_ROLE_SINK);
	ck_assert_str_eq(mk_head_role_name(c->role), "cls-sep-sink");
}
END_TEST

START_TEST(test_punct)
{
	uint8_t kp[20] = {0};
	mk_head_row r[T_HEADS];

	kp[3] = kp[7] = 1; /* two punctuation keys among 16 */
	test_rows(20, 16, 4, kp, r);
	ck_assert_double_eq(r[T_UNIFORM].punct, 2.0 / 16);
	ck_assert_double_eq(r[T_CLS].punct, 0.0);
	ck_assert_double_eq(r[T_PREV].punct, 2.0 / 16); /* rows 4 and 8 */
}
END_TEST

/* The first test passed wins; NaN passes none. */
START_TEST(test_classify_order)
{
	mk_head_thresholds t = {0.5, 0.5, 0.5, 0.5, 0.75};
	mk_head_row r = {.prev = 0.5, .next = 0.9, .band = 1, .cls = 1, .entropy_norm = 1};

	ck_assert_int_eq(mk_head_classify(&r, &t), MK_ROLE_PREV);
	r.prev = 0.49;
	ck_assert_int_eq(mk_head_classify(&r, &t), MK_ROLE_NEXT);
	r.next = NAN;
	ck_assert_int_eq(mk_head_classify(&r, &t), MK_ROLE_LOCAL);
	r.band = 0.2;
	ck_assert_int_eq(mk_head_classify(&r, &t), MK_ROLE_SINK);
	r.cls = 0.2;
	r.sep = 0.29;
	ck_assert_int_eq(mk_head_classify(&r, &t), MK_ROLE_BROAD);
	r.entropy_norm = NAN;
	ck_assert_int_eq(mk_head_classify(&r, &t), MK_ROLE_MIXED);
	ck_assert_str_eq(mk_head_role_name(MK_ROLE_PREV), "previous-token");
	ck_assert_str_eq(mk_head_role_short(MK_ROLE_MIXED), "mixed");
}
END_TEST

START_TEST(test_sort)
{
	mk_head_row rows[3] = {{.layer = 0, .head = 0, .prev = 0.2, .role = MK_ROLE_MIXED},
			       {.layer = 0, .head = 1, .prev = NAN, .role = MK_ROLE_PREV},
			       {.layer = 1, .head = 0, .prev = 0.9, .role = MK_ROLE_BROAD}};
	mk_head_row sorted[3];
	mk_head_roles r = {.count = 3, .by_head = rows, .sorted = sorted};

	ck_assert_int_eq(mk_head_roles_sort(&r, "prev"), MK_OK);
	ck_assert_int_eq(sorted[0].layer, 1); /* largest first, NaN last */
	ck_assert_int_eq(sorted[1].head, 0);
	ck_assert_int_eq(sorted[2].head, 1);
	ck_assert_int_eq(mk_head_roles_sort(&r, "role"), MK_OK);
	ck_assert_int_eq(sorted[0].role, MK_ROLE_PREV);
	ck_assert_int_eq(sorted[2].role, MK_ROLE_MIXED);
	ck_assert_int_eq(mk_head_roles_sort(&r, "layer"), MK_OK);
	ck_assert_int_eq(sorted[0].head, 0);
	ck_assert_int_eq(sorted[1].head, 1);
	ck_assert_int_eq(mk_head_roles_sort(&r, "nope"), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "no column 'nope'"));
	ck_assert_str_eq(mk_error_get()->param, "sort");
}
END_TEST

/* Two samples (lengths 4 and 2, N 4) of 3 heads, one layer, written as
 * float32 with their lengths; the run pools rows over both. */
START_TEST(test_run_file)
{
	char path[256];
	float *p4 = test_block(4, 4), *p2 = test_block(4, 2);
	double data[2 * T_HEADS * 16], lens[2] = {4, 2};
	hsize_t dims[5] = {2, 1, T_HEADS, 4, 4};
	mk_head_roles_opts o;
	mk_head_roles r;
	hid_t f;

	for (int k = 0; k < T_HEADS * 16; k++) {
		data[k] = p4[k];
		data[T_HEADS * 16 + k] = isnan(p2[k]) ? 7.0f : p2[k]; /* junk padding */
	}
	h5t_tmpname(path, sizeof path, "head_roles");
	f = h5t_create(path);
	h5t_write(f, "attn", 5, dims, H5T_IEEE_F32LE, data);
	h5t_write(f, "lengths", 1, (hsize_t[]){2}, H5T_STD_I64LE, lens);
	H5Fclose(f);
	mk_head_roles_opts_init(&o);
	ck_assert_int_eq(mk_head_roles_run(path, &o, &r), MK_OK);
	ck_assert_int_eq(r.map_size, 2); /* the lower median of 4 and 2 */
	ck_assert_int_eq(r.map_samples, 2);
	ck_assert_uint_eq(r.rows, 6);
	ck_assert_double_eq(r.by_head[T_PREV].prev, 1.0);
	ck_assert_double_eq(r.by_head[T_CLS].cls, 1.0);
	ck_assert_double_eq(r.by_head[T_UNIFORM].diag, (4 * 0.25 + 2 * 0.5) / 6);
	ck_assert_int_eq(r.by_head[T_PREV].role, MK_ROLE_PREV);
	/* so short that the [CLS] head's rows 1 are on i - 1 too: prev (2 of 4
	 * rows) reaches 0.5, and previous-token comes first */
	ck_assert_double_eq(r.by_head[T_CLS].prev, 0.5);
	ck_assert_int_eq(r.counts[MK_ROLE_PREV].count, 2);
	ck_assert_ptr_nonnull(strstr(r.punct_note, "no /ids"));
	mk_head_roles_release(&r);
	o.map_size = 5;
	ck_assert_int_eq(mk_head_roles_run(path, &o, &r), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "map_size");
	unlink(path);
	free(p4);
	free(p2);
}
END_TEST

static Suite *head_roles_suite(void)
{
	Suite *s = suite_create("head_roles");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_known_answers);
	tcase_add_test(tc, test_punct);
	tcase_add_test(tc, test_classify_order);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_run_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(head_roles_suite());
}
