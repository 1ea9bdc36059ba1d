/* Unit tests of maskkit report's pieces that need no child process: the
 * sweep CSV reader, the shell quoting of the commands it prints, and the
 * template filling and Markdown -> HTML rendering. */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report.h"
#include "testutil.h"

static char dir[] = "/tmp/check_report.XXXXXX";
static char path[4200];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_report.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/s.csv", dir);
	unsetenv("MASKKIT_TEMPLATES");
}

static void teardown(void)
{
	char cmd[4300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *file, const char *text)
{
	FILE *f = fopen(file, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static char *slurp(const char *file)
{
	FILE *f = fopen(file, "r");
	char *buf = calloc(1, 1 << 20);

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_lt(fread(buf, 1, (1 << 20) - 1, f), (1 << 20) - 1);
	fclose(f);
	return buf;
}

#define HEADER "pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n,batch," \
	       "heads,d,tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err\n"

START_TEST(sweep_reads_rows)
{
	rp_sweep_row *rows;
	size_t count;
	char reason[RP_REASON_MAX] = "";

	put(path, "# machine: x\r\n" HEADER
	    "local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,0.0004,0.0003,2.5,1,1,1e-7\r\n"
	    "\n"
	    "local,-,0.5,0,1,dense,softmax,cpu,fp32,512,1,2,64,64,0.001,0.001,1,1,1,0\n");
	ck_assert_int_eq(rp_sweep_read(path, &rows, &count, reason, sizeof reason), MK_OK);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_eq(rows[0].pattern, "local");
	ck_assert_str_eq(rows[0].kernel, "block");
	ck_assert_double_eq_tol(rows[0].achieved, 0.49, 1e-15);
	ck_assert_double_eq_tol(rows[0].median_s, 0.0004, 1e-15);
	ck_assert_double_eq_tol(rows[0].speedup, 2.5, 1e-15);
	ck_assert_int_eq(rows[0].n, 512);
	ck_assert_str_eq(rows[1].kernel, "dense");
	free(rows);
}
END_TEST

/* Each malformed file is refused with its line and the problem named. */
START_TEST(sweep_refuses_malformed)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"", "no header line"},
		{HEADER, "no results"},
		{"pattern,achieved\nlocal,0.5\n", "line 1: no column 'kernel'"},
		{HEADER "local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,fast,0.1,2,1,1,0\n",
		 "line 2: median_s 'fast'"},
		{HEADER "local,w=3,0.5,1.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,1,0.1,2,1,1,0\n",
		 "line 2: achieved '1.49'"},
		{HEADER "local,w=3,0.5\n", "line 2: a different number of fields"},
		{HEADER "local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,5.5,1,2,64,64,1,0.1,2,1,1,0\n",
		 "line 2: n '5.5'"},
		{HEADER ",w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,1,0.1,2,1,1,0\n",
		 "line 2: an empty"},
		{HEADER "local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,1,0.1,-2,1,1,0\n",
		 "line 2: speedup '-2'"},
	};

	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		rp_sweep_row *rows = (void *)1;
		size_t count = 7;
		char reason[RP_REASON_MAX] = "";
		put(path, cases[k].text);
		ck_assert_int_ne(rp_sweep_read(path, &rows, &count, reason, sizeof reason), MK_OK);
		ck_assert_msg(strstr(reason, cases[k].want) && strstr(reason, path),
			      "case %zu: '%s' lacks '%s'", k, reason, cases[k].want);
		ck_assert_ptr_null(rows);
		ck_assert_uint_eq(count, 0);
	}
}
END_TEST

START_TEST(sweep_missing_file)
{
	rp_sweep_row *rows;
	size_t count;
	char reason[RP_REASON_MAX] = "";

	ck_assert_int_eq(rp_sweep_read("/nonexistent/s.csv", &rows, &count, reason, sizeof reason),
			 MK_EIO);
	ck_assert_ptr_nonnull(strstr(reason, "/nonexistent/s.csv"));
}
END_TEST

/* The printed commands are shell words: sh reads back the same argv. */
START_TEST(command_quoting)
{
	const char *argv[] = {"gen", "axis(rows=2,5)", "it's", "a b", "plain-1.5", NULL};
	char *cmd = rp_command(argv, true), sh[1024], *out;

	ck_assert_str_eq(cmd, "maskkit gen 'axis(rows=2,5)' 'it'\\''s' 'a b' plain-1.5");
	snprintf(sh, sizeof sh, "maskkit() { printf '%%s|' \"$@\"; }; %s > '%s/o'", cmd, dir);
	ck_assert_int_eq(system(sh), 0);
	snprintf(path, sizeof path, "%s/o", dir);
	out = slurp(path);
	ck_assert_str_eq(out, "gen|axis(rows=2,5)|it's|a b|plain-1.5|");
	free(out);
	free(cmd);
}
END_TEST

static rp_section sections[2];

static void fill_sections(void)
{
	sections[0] = (rp_section){.slot = "header", .text = strdup("made by a test")};
	sections[1] = (rp_section){.slot = "eq9", .text = strdup("| a | b |\n|---|---|\n| 1 | 2 |\n")};
}

static void free_sections(void)
{
	for (int k = 0; k < 2; k++)
		free(sections[k].text);
}

/* The template is filled in verbatim and the HTML has the GFM table. */
START_TEST(render_fills_and_converts)
{
	report r = {0};
	char *md, *html;

	snprintf(r.out, sizeof r.out, "%s", dir);
	snprintf(path, sizeof path, "%s/report.md", dir);
	put(path, "# T\n\n{{header}}\n\n{{eq9}}\n");
	snprintf(path, sizeof path, "%s/report.html", dir);
	put(path, "<html><title>{{title}}</title><body>{{body}}</body></html>\n");
	setenv("MASKKIT_TEMPLATES", dir, 1);
	fill_sections();
	ck_assert_int_eq(rp_render(&r, sections, 2), MK_OK);
	free_sections();
	snprintf(path, sizeof path, "%s/README.md", dir);
	md = slurp(path);
	ck_assert_str_eq(md, "# T\n\nmade by a test\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n");
	snprintf(path, sizeof path, "%s/index.html", dir);
	html = slurp(path);
	ck_assert_ptr_nonnull(strstr(html, "<title>maskkit report</title>"));
	ck_assert_ptr_nonnull(strstr(html, "<h1>T</h1>"));
	ck_assert_ptr_nonnull(strstr(html, "<table>"));
	ck_assert_ptr_nonnull(strstr(html, "<td>2</td>"));
	free(md);
	free(html);
}
END_TEST

/* An unknown placeholder is an error naming it, and writes nothing. */
START_TEST(render_unknown_placeholder)
{
	report r = {0};

	snprintf(r.out, sizeof r.out, "%s", dir);
	snprintf(path, sizeof path, "%s/report.md", dir);
	put(path, "{{header}} {{nosuch}}\n");
	snprintf(path, sizeof path, "%s/report.html", dir);
	put(path, "{{body}}\n");
	setenv("MASKKIT_TEMPLATES", dir, 1);
	fill_sections();
	ck_assert_int_eq(rp_render(&r, sections, 2), MK_EFORMAT);
	free_sections();
	ck_assert_ptr_nonnull(strstr(mk_error(), "{{nosuch}}"));
	snprintf(path, sizeof path, "%s/README.md", dir);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

/* The built-in templates have a slot for every section and nothing else. */
START_TEST(render_builtin_templates)
{
	static const char *const slots[] = {"header", "sparsebert-fig1", "sparsebert-table4",
					    "aaa-fig1", "eq9", "tisa", "attention", "dam", "axis",
					    "explain", "sweep"};
	enum { NS = sizeof slots / sizeof *slots };
	rp_section s[NS];
	report r = {0};
	char *md;

	snprintf(r.out, sizeof r.out, "%s", dir);
	for (int k = 0; k < NS; k++)
		s[k] = (rp_section){.slot = slots[k], .text = NULL};
	s[4].text = strdup("EQ9-TEXT");
	ck_assert_int_eq(rp_render(&r, s, NS), MK_OK);
	free(s[4].text);
	snprintf(path, sizeof path, "%s/README.md", dir);
	md = slurp(path);
	ck_assert_ptr_nonnull(strstr(md, "EQ9-TEXT"));
	ck_assert_ptr_null(strstr(md, "{{"));
	free(md);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *t = tcase_create("report");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, sweep_reads_rows);
	tcase_add_test(t, sweep_refuses_malformed);
	tcase_add_test(t, sweep_missing_file);
	tcase_add_test(t, command_quoting);
	tcase_add_test(t, render_fills_and_converts);
	tcase_add_test(t, render_unknown_placeholder);
	tcase_add_test(t, render_builtin_templates);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return mk_test_main(report_suite());
}
