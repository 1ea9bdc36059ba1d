/* Unit tests of gnuplot figures (mk_plot_run): with the real gnuplot when it
 * is installed, and with shell scripts standing in for it. */
/* nftw() (in plottestutil.h) is an X/Open extension, not in the POSIX base we build for. */
#define _XOPEN_SOURCE 700
#include "config.h"
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "plot_internal.h"
#include "testutil.h"
#include "plottestutil.h"

static char out_png[PATH_MAX + 16]; /* scratch/out/p.png */

static void gnuplot_setup(void)
{
	scratch_setup();
	snprintf(out_png, sizeof out_png, "%s/out/p.png", scratch);
	unsetenv("MASKKIT_TEMPLATES");
}

/* A Toeplitz profile of a 3 x 3 matrix with rows 0 and 2 shown. */
static const char *tp_names[] = {"d", "t", "row_0", "row_2"};
static const double tp_data[] = {
	-2, 0.1, NAN, 0.1, -1, 0.3, NAN, 0.2, 0, 1, 1, 0.9, 1, 0.3, 0.3, NAN, 2, 0.1, 0.1, NAN,
};

static mk_plot profile_plot(void)
{
	return (mk_plot){.template_name = "toeplitz_profile", .output = out_png, .title = "profile",
			 .data = tp_data, .rows = 5, .ncols = 4, .col_names = tp_names,
			 .panels = 1};
}

static void run_fails(const mk_plot *p, int status, const char *want)
{
	int ret = mk_plot_run(p);
	ck_assert_msg(ret == status, "status %d, expected %d (%s)", ret, status, mk_error());
	ck_assert_msg(strstr(mk_error(), want), "message '%s' lacks '%s'", mk_error(), want);
}

/* Writes scratch/tpl/NAME.gp and points MASKKIT_TEMPLATES there. */
static void put_template(const char *name, const char *text)
{
	char file[128];
	mkdir(path("tpl"), 0700);
	snprintf(file, sizeof file, "tpl/%s.gp", name);
	put_file(path(file), text);
	ck_assert_int_eq(setenv("MASKKIT_TEMPLATES", path("tpl"), 1), 0);
}

/* Runs template text (which writes to the file named by gnuplot variable
 * `probe`, and draws nothing) on p and returns what it wrote. */
static char *probe(mk_plot *p, const char *text)
{
	char vars[PATH_MAX + 64];
	snprintf(vars, sizeof vars, "probe = '%s'\nextra = 42", path("probe.txt"));
	p->template_name = "probe";
	p->vars = vars;
	put_template("probe", text);
	run_fails(p, MK_EIO, "gnuplot produced no PNG");
	return get_file(path("probe.txt"));
}

static const char *broken = "set terminal pngcairo size 64,48\nset output output\n"
			    "plot nosuchvar\n";

START_TEST(plot_toeplitz_profile_png)
{
	mk_plot p = profile_plot();
	char *png;
	ck_assert_msg(mk_plot_run(&p) == MK_OK, "%s", mk_error());
	png = get_file(out_png);
	ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
	free(png);
}
END_TEST

/* A TISA fit picture: profile t and fit of each head at offsets -2..2. */
static struct image tisa_picture(int heads)
{
	static const char *names[] = {"d", "t", "fit"};
	double *v = malloc((size_t)heads * 5 * 3 * sizeof *v), *r = v;
	mk_plot p = {.template_name = "tisa_fit", .output = out_png, .title = "fit",
		     .data = v, .rows = heads * 5, .ncols = 3, .col_names = names,
		     .panels = heads};
	for (int h = 0; h < heads; h++)
		for (int d = -2; d <= 2; d++, r += 3) {
			r[0] = d;
			r[1] = exp(-abs(d) / (h + 1.0));
			r[2] = exp(-abs(d) / (h + 1.5));
		}
	ck_assert_msg(mk_plot_run(&p) == MK_OK, "%s", mk_error());
	free(v);
	return read_png(out_png);
}

START_TEST(plot_tisa_fit_grows_with_panels)
{
	struct image two = tisa_picture(2), eight = tisa_picture(8);
	ck_assert_uint_gt(eight.w, two.w);
	ck_assert_uint_gt(eight.h, two.h);
	free(two.rgb);
	free(eight.rgb);
}
END_TEST

START_TEST(plot_template_error_reported)
{
	mk_plot p = profile_plot();
	put_template("toeplitz_profile", broken);
	run_fails(&p, MK_EIO, "gnuplot failed: ");
	ck_assert_ptr_nonnull(strstr(mk_error(), "line 3: undefined variable: nosuchvar"));
}
END_TEST

START_TEST(plot_settings_error_named)
{
	mk_plot p = profile_plot();
	p.vars = "x = nosuchvar";
	run_fails(&p, MK_EIO, "the settings before template 'toeplitz_profile' line");
	ck_assert_ptr_null(strstr(mk_error(), path("tmp")));
}
END_TEST

START_TEST(plot_templates_override)
{
	mk_plot p = profile_plot();
	struct image im;
	put_template("toeplitz_profile", "set terminal pngcairo size 123,45\nset output output\n"
					 "plot datafile using 1:2 with lines\n");
	ck_assert_msg(mk_plot_run(&p) == MK_OK, "%s", mk_error());
	im = read_png(out_png);
	ck_assert_uint_eq(im.w, 123);
	ck_assert_uint_eq(im.h, 45);
	free(im.rgb);
}
END_TEST

START_TEST(plot_settings_reach_template)
{
	static const char *names[] = {"d", "it's"};
	static const double v[] = {0, 1, 1, 2, 2, 3, 3, 4};
	mk_plot p = {.output = out_png, .title = "it's\n`date` @x", .data = v, .rows = 4,
		     .ncols = 2, .col_names = names, .panels = 2};
	char *got = probe(&p, "set print probe\nprint title\nprint panels\nprint rows_per_panel\n"
			      "print columns\nprint extra\nunset print\n");
	ck_assert_str_eq(got, "it's `date` @x\n2\n2\nd it's\n42\n");
	free(got);
}
END_TEST

START_TEST(plot_data_table_layout)
{
	static const char *names[] = {"d", "t"};
	static const double v[] = {0, 1.5, 1, NAN, 2, -INFINITY, 3, 1e-12};
	mk_plot p = {.output = out_png, .data = v, .rows = 4, .ncols = 2, .col_names = names,
		     .panels = 2};
	char *got = probe(&p, "system(sprintf(\"cp '%s' '%s'\", datafile, probe))\n");
	ck_assert_str_eq(got, "# d t\n0 1.5\n1 NaN\n\n\n2 NaN\n3 1e-12\n");
	free(got);
}
END_TEST

/* _i = 0: after a success, 1: after a failure */
START_TEST(plot_temp_dir_removed)
{
	mk_plot p = profile_plot();
	if (_i)
		put_template("toeplitz_profile", broken);
	ck_assert_int_eq(mk_plot_run(&p), _i ? MK_EIO : MK_OK);
	ck_assert_int_eq(count_entries("tmp"), 0);
}
END_TEST

/* ---- gnuplot's absence and failures, and bad plots (no gnuplot needed) ------------ */

/* Runs a stand-in for gnuplot, a shell script with this body. */
static void run_fake(const char *body, const char *want)
{
	mk_plot p = profile_plot();
	char text[512];
	snprintf(text, sizeof text, "#!/bin/sh\n%s\n", body);
	put_file(path("fake-gnuplot"), text);
	ck_assert_int_eq(chmod(path("fake-gnuplot"), 0755), 0);
	ck_assert_int_eq(setenv("MASKKIT_GNUPLOT", path("fake-gnuplot"), 1), 0);
	run_fails(&p, MK_EIO, want);
}

START_TEST(plot_program_failure_first_line)
{
	run_fake("echo '\"t.gp\" line 4: warning: skipped' >&2\necho 'warning: ignore me' >&2\n"
		 "echo '  ^' >&2\necho 'it broke' >&2\necho 'and more' >&2\nexit 3",
		 "gnuplot failed: it broke");
}
END_TEST

START_TEST(plot_program_failure_status)
{
	run_fake("exit 3", "gnuplot failed: exit status 3");
}
END_TEST

START_TEST(plot_program_makes_no_png)
{
	put_file(out_png, "old");
	run_fake("exit 0", "gnuplot produced no PNG");
	expect_file(out_png, "old");
	ck_assert_int_eq(count_entries("out"), 1);
}
END_TEST

START_TEST(plot_program_missing)
{
	mk_plot p = profile_plot();
	setenv("MASKKIT_GNUPLOT", path("no-such-gnuplot"), 1);
	run_fails(&p, MK_EIO, "gnuplot not found");
	ck_assert_ptr_nonnull(strstr(mk_error(), "no-such-gnuplot"));
}
END_TEST

START_TEST(plot_not_on_path)
{
	mk_plot p = profile_plot();
	unsetenv("MASKKIT_GNUPLOT");
	setenv("PATH", path("out"), 1);
	ck_assert_int_eq(mk_plot_run(&p), MK_EIO);
	/* the picture that could not be made, then why */
	ck_assert_ptr_nonnull(strstr(mk_error(), p.output));
	ck_assert_ptr_nonnull(strstr(mk_error(), "': gnuplot not found (install gnuplot-nox, or set "
					      "MASKKIT_GNUPLOT)"));
}
END_TEST

START_TEST(plot_template_name_is_not_a_path)
{
	mk_plot p = profile_plot();
	put_template("x", broken);
	p.template_name = "../tpl/x";
	run_fails(&p, MK_EINVAL, "unknown template");
}
END_TEST

static const char *spaced_names[] = {"d", "t", "row 0", "row_2"};
static const struct {
	const char *name;
	int panels;
	const char *const *cols;
	const char *want;
} bad_plots[] = {
	{"toeplitz_profil", 1, tp_names, "unknown template 'toeplitz_profil'"},
	{"toeplitz_profile", 2, tp_names, "5 rows do not split into 2 panels"},
	{"toeplitz_profile", 1, spaced_names, "column name 'row 0'"},
	{"toeplitz_profile", 0, tp_names, "do not split into 0 panels"},
};

START_TEST(plot_bad_requests)
{
	mk_plot p = profile_plot();
	p.template_name = bad_plots[_i].name;
	p.panels = bad_plots[_i].panels;
	p.col_names = bad_plots[_i].cols;
	run_fails(&p, MK_EINVAL, bad_plots[_i].want);
}
END_TEST

/* ---- running ------------------------------------------------------------------- */

static bool on_path(const char *name)
{
	const char *dirs = getenv("PATH"), *end;
	char file[PATH_MAX];
	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	for (; dirs && *dirs; dirs = *end ? end + 1 : end) {
		end = strchr(dirs, ':');
		end = end ? end : dirs + strlen(dirs);
		snprintf(file, sizeof file, "%.*s/%s", (int)(end - dirs), dirs, name);
		if (access(file, X_OK) == 0)
			return true;
	}
	return false;
}

START_TEST(gnuplot_required)
{
	ck_abort_msg("gnuplot not found, and MASKKIT_REQUIRE_ALL is set");
}
END_TEST

static TCase *gnuplot_tests(void)
{
	const char *prog = getenv("MASKKIT_GNUPLOT"), *require = getenv("MASKKIT_REQUIRE_ALL");
	TCase *tc = tcase_create("gnuplot");
	tcase_add_checked_fixture(tc, gnuplot_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	if (on_path(prog && *prog ? prog : "gnuplot")) {
		tcase_add_test(tc, plot_toeplitz_profile_png);
		tcase_add_test(tc, plot_tisa_fit_grows_with_panels);
		tcase_add_test(tc, plot_template_error_reported);
		tcase_add_test(tc, plot_settings_error_named);
		tcase_add_test(tc, plot_templates_override);
		tcase_add_test(tc, plot_settings_reach_template);
		tcase_add_test(tc, plot_data_table_layout);
		tcase_add_loop_test(tc, plot_temp_dir_removed, 0, 2);
	} else if (require && *require && strcmp(require, "0") != 0) {
		tcase_add_test(tc, gnuplot_required);
	} else {
		fprintf(stderr, "check_gnuplot: SKIP the tests that run gnuplot: not found "
				"(apt-get install gnuplot-nox)\n");
	}
	return tc;
}

static Suite *gnuplot_suite(void)
{
	Suite *s = suite_create("gnuplot");
	TCase *tc = tcase_create("no gnuplot");
	tcase_add_checked_fixture(tc, gnuplot_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, plot_program_failure_first_line);
	tcase_add_test(tc, plot_program_failure_status);
	tcase_add_test(tc, plot_program_makes_no_png);
	tcase_add_test(tc, plot_program_missing);
	tcase_add_test(tc, plot_not_on_path);
	tcase_add_test(tc, plot_template_name_is_not_a_path);
	tcase_add_loop_test(tc, plot_bad_requests, 0, sizeof bad_plots / sizeof bad_plots[0]);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, gnuplot_tests());
	return s;
}

int main(void)
{
	return mk_test_main(gnuplot_suite());
}
