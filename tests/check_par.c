/* Unit tests of the MPI layer (par.c).  They hold for any number of ranks:
 * `make check` runs them as one process, tests/mpi/run.sh under mpirun with
 * 3 ranks (CK_FORK=no: Check must not fork after MPI_Init).  Items are
 * dealt round-robin and folded in order on rank 0; a failure anywhere is
 * returned on every rank with the failing rank named; gathers keep rank
 * order. */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

typedef struct par_log {
	int64_t folded[64], nfolded, fail_work, fail_fold;
	int64_t worked_elsewhere; /* items worked on a rank they were not dealt to */
} par_log;

static int par_work(int64_t item, void *buf, void *arg)
{
	par_log *g = arg;
	int64_t *v = buf;

	if (item % mk_par_size() != mk_par_rank())
		g->worked_elsewhere++;
	if (item == g->fail_work)
		return mk_error_set(MK_EFORMAT, "boom at item %lld", (long long)item);
	v[0] = item * 3;
	v[1] = -item;
	return MK_OK;
}

static int par_fold(int64_t item, const void *buf, void *arg)
{
	par_log *g = arg;
	const int64_t *v = buf;

	ck_assert_int_eq(v[0], item * 3);
	ck_assert_int_eq(v[1], -item);
	if (item == g->fail_fold)
		return mk_error_set(MK_EINVAL, "fold refused item %lld", (long long)item);
	g->folded[g->nfolded++] = item;
	return MK_OK;
}

START_TEST(test_ordered_in_order)
{
	par_log g = {.fail_work = -1, .fail_fold = -1};

	ck_assert_int_eq(mk_par_ordered(23, 2 * sizeof(int64_t), par_work, NULL, par_fold, &g),
			 MK_OK);
	ck_assert_int_eq(g.worked_elsewhere, 0);
	if (mk_par_rank() == 0) {
		ck_assert_int_eq(g.nfolded, 23);
		for (int64_t k = 0; k < 23; k++)
			ck_assert_int_eq(g.folded[k], k);
	} else {
		ck_assert_int_eq(g.nfolded, 0);
	}
}
END_TEST

START_TEST(test_ordered_nothing)
{
	par_log g = {.fail_work = -1, .fail_fold = -1};

	ck_assert_int_eq(mk_par_ordered(0, 16, par_work, NULL, par_fold, &g), MK_OK);
	ck_assert_int_eq(g.nfolded, 0);
}
END_TEST

/* Item 7 fails where it is worked: every rank returns the failure, named by
 * its rank, and rank 0 folded exactly the items before it. */
START_TEST(test_ordered_work_fails)
{
	par_log g = {.fail_work = 7, .fail_fold = -1};
	int owner = 7 % mk_par_size();
	char want[64];

	ck_assert_int_eq(mk_par_ordered(23, 2 * sizeof(int64_t), par_work, NULL, par_fold, &g),
			 MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "boom at item 7"));
	snprintf(want, sizeof want, "rank %d of %d (", owner, mk_par_size());
	if (owner != 0)
		ck_assert_ptr_eq(strstr(mk_error(), want), mk_error());
	else
		ck_assert_ptr_eq(strstr(mk_error(), "boom"), mk_error());
	if (mk_par_rank() == 0)
		ck_assert_int_eq(g.nfolded, 7);
}
END_TEST

START_TEST(test_ordered_fold_fails)
{
	par_log g = {.fail_work = -1, .fail_fold = 4};

	ck_assert_int_eq(mk_par_ordered(23, 2 * sizeof(int64_t), par_work, NULL, par_fold, &g),
			 MK_EINVAL);
	ck_assert_str_eq(mk_error(), "fold refused item 4");
	if (mk_par_rank() == 0)
		ck_assert_int_eq(g.nfolded, 4);
}
END_TEST

START_TEST(test_agree)
{
	int last = mk_par_size() - 1, who = -2;

	ck_assert_int_eq(mk_par_agree(MK_OK, &who), MK_OK);
	ck_assert_int_eq(who, -1);
	mk_error_set(MK_EIO, "the last rank's file is missing");
	ck_assert_int_eq(mk_par_agree(mk_par_rank() == last ? MK_EIO : MK_OK, &who), MK_EIO);
	ck_assert_int_eq(who, last);
	ck_assert_ptr_nonnull(strstr(mk_error(), "the last rank's file is missing"));
	/* exit codes (> 0) travel as they are */
	ck_assert_int_eq(mk_par_agree(2, &who), 2);
	ck_assert_int_eq(who, 0);
}
END_TEST

START_TEST(test_gather_rank_order)
{
	unsigned char mine[8];
	size_t total = 99, want = 0, at = 0;
	void *all = NULL;
	int r = mk_par_rank();

	memset(mine, r + 1, sizeof mine);
	ck_assert_int_eq(mk_par_gather(mine, (size_t)r + 1, &all, &total), MK_OK);
	if (r != 0) {
		ck_assert_ptr_null(all);
		ck_assert_int_eq(total, 0);
		return;
	}
	for (int q = 0; q < mk_par_size(); q++)
		want += (size_t)q + 1;
	ck_assert_int_eq(total, want);
	for (int q = 0; q < mk_par_size(); q++)
		for (int k = 0; k <= q; k++)
			ck_assert_int_eq(((unsigned char *)all)[at++], q + 1);
	free(all);
}
END_TEST

START_TEST(test_same)
{
	int same = 42, rank = mk_par_rank();

	ck_assert_int_eq(mk_par_same(&same, sizeof same, "the answer differs"), MK_OK);
	if (mk_par_size() == 1) {
		ck_assert_int_eq(mk_par_same(&rank, sizeof rank, "the rank differs"), MK_OK);
		return;
	}
	ck_assert_int_eq(mk_par_same(&rank, sizeof rank, "the rank differs"), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "rank 1 of "));
	ck_assert_ptr_nonnull(strstr(mk_error(), "the rank differs"));
}
END_TEST

START_TEST(test_alone)
{
	/* without a launcher (make check): rank 0 of 1 */
	if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE"))
		return;
	ck_assert_int_eq(mk_par_rank(), 0);
	ck_assert_int_eq(mk_par_size(), 1);
	ck_assert_int_eq(mk_par_local_rank(), 0);
	ck_assert_str_ne(mk_par_host(), "");
}
END_TEST

static Suite *par_suite(void)
{
	Suite *s = suite_create("par");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_alone);
	tcase_add_test(tc, test_ordered_in_order);
	tcase_add_test(tc, test_ordered_nothing);
	tcase_add_test(tc, test_ordered_work_fails);
	tcase_add_test(tc, test_ordered_fold_fails);
	tcase_add_test(tc, test_agree);
	tcase_add_test(tc, test_gather_rank_order);
	tcase_add_test(tc, test_same);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	int code;

	if (mk_par_init(&argc, &argv) != MK_OK)
		return EXIT_FAILURE;
	code = mk_test_main(par_suite());
	mk_par_done();
	return mk_par_end(code, "check_par failed", 2);
}
