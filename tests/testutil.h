/* Small helpers shared by the Check unit tests. */
#ifndef MK_TESTUTIL_H
#define MK_TESTUTIL_H

#include <check.h>
#include <stdlib.h>
#include "maskkit.h"

/* Runs every test of s and returns the exit status for main(). */
static inline int mk_test_main(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A tensor of the given dims filled with e * 0.25 - 3 (exact in float32). */
static inline void mk_test_tensor(int rank, const int64_t *dims, mk_dtype dtype, mk_tensor *t)
{
	ck_assert_int_eq(mk_tensor_new(rank, dims, dtype, 0, "test", t), MK_OK);
	for (uint64_t e = 0; e < mk_tensor_count(t); e++)
		t->data[e] = (float)e * 0.25f - 3.0f;
}

/* A reproducible pseudo-random mask from a 64-bit LCG (independent of rng.c). */
static inline mk_mask *mk_test_random_mask(int64_t n, uint64_t seed, unsigned density_pct)
{
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(n, 0, &m), MK_OK);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			if ((seed >> 33) % 100 < density_pct)
				mk_mask_set(m, i, j, true);
		}
	return m;
}

#endif
