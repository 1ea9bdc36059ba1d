/* placeholder */
#include "testutil.h"
START_TEST(test_placeholder)
{
	ck_assert_int_eq(MK_OK, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("explain_norm");
	TCase *t = tcase_create("placeholder");
	tcase_add_test(t, test_placeholder);
	suite_add_tcase(s, t);
	return mk_test_main(s);
}
