/* Unit tests of maskkit report's pieces that need no child process: the
 * sweep CSV reader, the shell quoting of the commands it prints, and the
 * template filling and Markdown -> HTML rendering. */
#include "config.h"
#include <math.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
#define HEADER_NEW "pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n," \
	"batch,heads,d,tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err,q1_s,q3_s," \
	"speedup_lo,speedup_hi,reps,dense_s,dense_baseline_s,agree,remeasured,mask,rank_ok," \
	"noisy_vs\n"
#define ROW_NEW "local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,1,0.1,2,1,1,0," \
	"0.9,1.1,1.9,2.1"

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

/* The columns that came with the intervals, and RFC 4180 quoting (a label
 * or mask with commas and quotes); a CSV without them reads as NaN and -1. */
START_TEST(sweep_reads_intervals)
{
	rp_sweep_row *rows;
	size_t count;
	char reason[RP_REASON_MAX] = "";

	put(path, HEADER_NEW
	    "\"lg,\"\"x\"\"\",,0.9732,0.9732,0.88,csr,softmax,cpu,fp32,256,1,2,64,64,1e-4,9e-5,"
	    "3.95,1,1,1e-7,9.5e-5,1.1e-4,3.85,4.15,158,4e-4,3.9e-4,1,0,\"local(w=2,dilation=1)+"
	    "global1\",1,\n");
	ck_assert_int_eq(rp_sweep_read(path, &rows, &count, reason, sizeof reason), MK_OK);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(rows[0].pattern, "lg,\"x\"");
	ck_assert(rows[0].speedup_lo == 3.85 && rows[0].speedup_hi == 4.15 && rows[0].reps == 158);
	ck_assert(rows[0].q1_s == 9.5e-5 && rows[0].q3_s == 1.1e-4 && rows[0].target == 0.9732);
	ck_assert(rows[0].dense_s == 4e-4 && rows[0].baseline_s == 3.9e-4);
	ck_assert(rows[0].agree == 1 && rows[0].rank_ok == 1);
	free(rows);
	put(path, HEADER "local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,0.0004,0.0003,"
	    "2.5,1,1,1e-7\n");
	ck_assert_int_eq(rp_sweep_read(path, &rows, &count, reason, sizeof reason), MK_OK);
	ck_assert(isnan(rows[0].speedup_lo) && isnan(rows[0].dense_s) && isnan(rows[0].q1_s));
	ck_assert(rows[0].reps == -1 && rows[0].rank_ok == -1 && rows[0].agree == -1);
	free(rows);
}
END_TEST

/* The sweep section's table says what its CSV says: a row per non-dense
 * kernel with its median, dense's median at that point, the speed-up and
 * its interval, the repetitions, and why a row is not ranked. */
START_TEST(sweep_table_agrees)
{
	report r = {0};
	rp_section sec = {.slot = "sweep"};
	char *sweeps[1] = {path};
	char *md;

	put(path, HEADER_NEW
	    "local,w=9,0.5,0.5,0.6,dense,softmax,cpu,fp32,512,1,2,64,64,0.002,0.0019,1,1,1,0,0.0019,"
	    "0.0021,1,1,9,0.002,0.0021,1,0,local(w=9),0,masked\n"
	    "local,w=9,0.5,0.5,0.6,masked,softmax,cpu,fp32,512,1,2,64,64,0.00205,0.002,0.97,1,1,0,"
	    "0.002,0.0021,0.95,1.01,6,0.002,0.0021,1,0,local(w=9),0,dense\n"
	    "local,w=9,0.5,0.5,0.6,block,softmax,cpu,fp32,512,1,2,64,64,0.001,0.0009,1.98,1,1,0,"
	    "0.00095,0.0011,1.95,2.02,9,0.002,0.0021,1,0,local(w=9),1,\n"
	    "star,block=9,0.9,0.9,0.3,csr,softmax,cpu,fp32,512,1,2,64,64,0.0005,0.0004,3.1,1,1,0,"
	    "0.00045,0.0006,3.0,3.2,12,0.002,0.0021,0,1,star(block=9),0,\n");
	snprintf(r.out, sizeof r.out, "%s", dir);
	for (int k = 0; k < 2; k++) {
		char sub[4300];
		snprintf(sub, sizeof sub, "%s/%s", dir, k ? "figures" : "tables");
		ck_assert_int_eq(mkdir(sub, 0700), 0);
	}
	r.sweeps = sweeps;
	r.nsweeps = 1;
	r.cur = &sec;
	ck_assert_ptr_nonnull(sec.f = open_memstream(&sec.text, &sec.len));
	rp_section_sweep(&r);
	fclose(sec.f);
	md = sec.text;
	ck_assert_ptr_nonnull(strstr(md, "| local | block | softmax | cpu fp32 | 512 | 50.0% | 1.000 | "
				 "2.000 | 1.98× [1.95, 2.02] | 9 | yes |\n"));
	ck_assert_ptr_nonnull(strstr(md, "| local | masked | softmax | cpu fp32 | 512 | 50.0% | 2.050 "
				 "| 2.000 | 0.97× [0.95, 1.01] | 6 | no (intervals overlap) |\n"));
	ck_assert_ptr_nonnull(strstr(md, "| star | csr | softmax | cpu fp32 | 512 | 90.0% | 0.500 | "
				 "2.000 | 3.10× [3.00, 3.20] | 12 | no (medians disagree) |\n"));
	ck_assert_ptr_null(strstr(md, "| dense |"));
	free(md);
	for (int k = 0; k < r.nitems; k++) {
		free(r.items[k]->file);
		free(r.items[k]->section);
		free(r.items[k]);
	}
	free(r.items);
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
		{HEADER "\"local,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,1,0.1,2,1,1,0\n",
		 "line 2: a different number of fields"},
		{HEADER "\"lo\"cal,w=3,0.5,0.49,0.6,block,softmax,cpu,fp32,512,1,2,64,64,1,0.1,2,1,1,0\n",
		 "line 2: a different number of fields"},
		{HEADER_NEW ROW_NEW ",x,1,1,1,0,m,1,\n", "line 2: reps 'x' is not a count"},
		{HEADER_NEW ROW_NEW ",6,1,1,2.5,0,m,1,\n", "line 2: agree '2.5' is not a count"},
		{HEADER_NEW ROW_NEW ",6,fast,1,1,0,m,1,\n", "line 2: dense_s 'fast' is not a number"},
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
	ck_assert_ptr_nonnull(strstr(html, "<h1 id=\"t\">T</h1>"));
	ck_assert_ptr_nonnull(strstr(html, "<table>"));
	ck_assert_ptr_nonnull(strstr(html, "<td>2</td>"));
	free(md);
	free(html);
}
END_TEST

/* Every link to "#x" in html has an element with id="x"; returns the
 * number of links. */
static int anchors_resolve(const char *html)
{
	int links = 0;

	for (const char *p = html; (p = strstr(p, "href=\"#"));) {
		char want[256] = "id=\"";
		size_t len = strcspn(p + 7, "\""), o = 4;
		ck_assert_uint_lt(len, 200);
		/* cmark percent-encodes the link; a browser decodes it to match */
		for (size_t k = 0; k < len; k++) {
			unsigned v;
			if (p[7 + k] == '%' && sscanf(p + 8 + k, "%2x", &v) == 1) {
				want[o++] = (char)v;
				k += 2;
			} else {
				want[o++] = p[7 + k];
			}
		}
		snprintf(want + o, sizeof want - o, "\"");
		ck_assert_msg(strstr(html, want), "no element with %s", want);
		links++;
		p += 7;
	}
	return links;
}

/* The contents: a link per ## and #### heading (not those in fenced code),
 * to GitHub's slug of its text (a repeated one numbered), and the HTML's
 * headings carry those ids; a long table's <details> survives rendering. */
START_TEST(render_contents_anchors)
{
	report r = {0};
	char *md, *html;

	snprintf(r.out, sizeof r.out, "%s", dir);
	snprintf(path, sizeof path, "%s/report.md", dir);
	put(path, "# Top\n\n{{toc}}\n\n## 1. A, Fig. 1: x = 2\n\n```sh\n# not a heading\n```\n\n"
	    "#### R² of the model\n\n## 2. B (C & D)\n\n#### Part\n\n#### Part\n\n"
	    "<details><summary>S</summary>\n\n| a |\n|---|\n| 1 |\n\n</details>\n");
	snprintf(path, sizeof path, "%s/report.html", dir);
	put(path, "{{body}}\n");
	setenv("MASKKIT_TEMPLATES", dir, 1);
	ck_assert_int_eq(rp_render(&r, NULL, 0), MK_OK);
	snprintf(path, sizeof path, "%s/README.md", dir);
	md = slurp(path);
	ck_assert_ptr_nonnull(strstr(md, "- [1. A, Fig. 1: x = 2](#1-a-fig-1-x--2)\n"
				     "  - [R² of the model](#r²-of-the-model)\n"
				     "- [2. B (C & D)](#2-b-c--d)\n  - [Part](#part)\n"
				     "  - [Part](#part-1)\n"));
	ck_assert_ptr_null(strstr(md, "not-a-heading"));
	snprintf(path, sizeof path, "%s/index.html", dir);
	html = slurp(path);
	ck_assert_int_eq(anchors_resolve(html), 5);
	ck_assert_ptr_nonnull(strstr(html, "<h2 id=\"2-b-c--d\">"));
	ck_assert_ptr_nonnull(strstr(html, "<details><summary>S</summary>"));
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
					    "explain", "sweep", "heads"};
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
	/* a link to every section, each resolving */
	snprintf(path, sizeof path, "%s/index.html", dir);
	md = slurp(path);
	ck_assert_int_ge(anchors_resolve(md), 10);
	free(md);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *t = tcase_create("report");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, sweep_reads_rows);
	tcase_add_test(t, sweep_reads_intervals);
	tcase_add_test(t, sweep_table_agrees);
	tcase_add_test(t, sweep_refuses_malformed);
	tcase_add_test(t, sweep_missing_file);
	tcase_add_test(t, command_quoting);
	tcase_add_test(t, render_fills_and_converts);
	tcase_add_test(t, render_contents_anchors);
	tcase_add_test(t, render_unknown_placeholder);
	tcase_add_test(t, render_builtin_templates);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return mk_test_main(report_suite());
}
