/* Small helpers shared by the Check unit tests. */
#ifndef MK_TESTUTIL_H
#define MK_TESTUTIL_H

#include <check.h>
#include <stdlib.h>

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

#endif
