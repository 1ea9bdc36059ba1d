/* maskkit report: the papers' figures and tables, regenerated into one
 * directory (README.md, index.html, figures/, tables/). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "report.h"

#define RP_MAX_INPUTS 64

static const char report_usage[] =
"usage: maskkit report [--out DIR] [--weights FILE.h5]... [--sweep RESULTS.csv]...\n"
"                      [--quick] [--only SECTION,...] [--quiet]\n"
"\n"
"Regenerates the figures and tables of the papers maskkit follows, and how\n"
"your masks compare with them, into DIR (default: report):\n"
"  DIR/README.md     the report in Markdown (templates/report.md filled in)\n"
"  DIR/index.html    the same rendered to HTML (libcmark-gfm)\n"
"  DIR/figures/      PNG figures (the report's own gnuplot figures also SVG)\n"
"  DIR/tables/       the numbers behind them, as CSV\n"
"Sections (names for --only):\n"
"  sparsebert-fig1   SparseBERT Fig. 1: Star, LogSparse, Strided, Fixed,\n"
"                    Longformer, BigBird at n = 16, titled with their sparsity\n"
"  sparsebert-table4 SparseBERT Table 4: those patterns at n = 128, with and\n"
"                    without the diagonal (-diag), sparsity in %\n"
"  aaa-fig1          Adaptive Axis Attention Fig. 1: Local, Global, Diagonal,\n"
"                    Axis, Local+Global at N = 8\n"
"  eq9               that paper's Eq. 9: sparsity at the longest length vs the\n"
"                    mean over samples at their own lengths (synthetic lengths)\n"
"  tisa              TISA Fig. 1 and 2: P = E_P E_P^T and the Toeplitz R^2 of\n"
"                    each --weights file (none given: synthetic example models\n"
"                    written by examples/make_tf_model.py, labelled so)\n"
"  explain           Ding et al. Fig. 1, 6, 7: explaining away, mode collapse,\n"
"                    centre distances\n"
"  sweep             time and speed-up against sparsity per pattern and kernel,\n"
"                    from --sweep files (maskkit sweep CSV), else a CPU sweep\n"
"                    run now\n"
"Each section is made by maskkit's own commands, run as child processes in\n"
"DIR; the report prints them under each figure, so that running them in DIR\n"
"remakes it.  A section that fails (a missing weights file, a malformed CSV,\n"
"gnuplot not installed) costs only its figures: the page says which could\n"
"not be made and why, and the rest is written.  Everything but the timings\n"
"of a sweep run now is the same, byte for byte, on every run (fixed seeds,\n"
"no timestamps).\n"
"\n"
"options:\n"
"  -o, --out DIR        output directory (default report; made if missing)\n"
"      --weights F.h5   a model's weights for the TISA section (repeatable);\n"
"                       F.h5:/path names its position embeddings\n"
"      --sweep F.csv    results of 'maskkit sweep -o F.csv' (repeatable)\n"
"      --quick          smaller explain and sweep runs (under 2 minutes)\n"
"      --only S,...     remake only these sections' figures and tables\n"
"                       (README.md and index.html are left as they are)\n"
"      --quiet          do not echo each command on stderr\n"
"  -h, --help           this help\n"
"\n"
"Environment: PYTHON (default python3) runs make_tf_model.py, found in\n"
"MASKKIT_EXAMPLES, the source tree's examples/ or the installed data;\n"
"MASKKIT_TEMPLATES and MASKKIT_GNUPLOT as for every plot.\n"
"\n"
"exit status: 0 the whole report, 1 a report with figures missing (named on\n"
"stderr and in the report), 2 bad options.\n";

const struct mk_cmd mk_cmd_report;

static const struct {
	const char *name;
	void (*run)(report *r);
} rp_sections[] = {
	{"sparsebert-fig1", rp_section_sparsebert_fig1},
	{"sparsebert-table4", rp_section_sparsebert_table4},
	{"aaa-fig1", rp_section_aaa_fig1},
	{"eq9", rp_section_eq9},
	{"tisa", rp_section_tisa},
	{"explain", rp_section_explain},
	{"sweep", rp_section_sweep},
};
#define RP_NSECTIONS (int)(sizeof rp_sections / sizeof *rp_sections)

enum { RP_OPT_WEIGHTS = 400, RP_OPT_SWEEP, RP_OPT_QUICK, RP_OPT_ONLY, RP_OPT_QUIET };

static bool rp_selected(const report *r, const char *name)
{
	size_t len = strlen(name);

	if (!r->only)
		return true;
	for (const char *p = r->only; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == len && strncmp(p, name, n) == 0)
			return true;
		p += n + (end != NULL);
	}
	return false;
}

static int rp_check_only(const char *only)
{
	for (const char *p = only; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		bool known = false;
		for (int k = 0; k < RP_NSECTIONS; k++)
			known |= strlen(rp_sections[k].name) == n && !strncmp(rp_sections[k].name, p, n);
		if (!known)
			return cli_usage(&mk_cmd_report, "--only: unknown section '%.*s'", (int)n, p);
		p += n + (end != NULL);
	}
	return -1;
}

static int rp_parse(report *r, const char **out, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"out", required_argument, NULL, 'o'},
		{"output", required_argument, NULL, 'o'},
		{"weights", required_argument, NULL, RP_OPT_WEIGHTS},
		{"sweep", required_argument, NULL, RP_OPT_SWEEP},
		{"quick", no_argument, NULL, RP_OPT_QUICK},
		{"only", required_argument, NULL, RP_OPT_ONLY},
		{"quiet", no_argument, NULL, RP_OPT_QUIET},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': *out = optarg; break;
		case RP_OPT_WEIGHTS:
			if (r->nweights == RP_MAX_INPUTS)
				return cli_usage(&mk_cmd_report, "at most %d --weights files", RP_MAX_INPUTS);
			r->weights[r->nweights++] = optarg;
			break;
		case RP_OPT_SWEEP:
			if (r->nsweeps == RP_MAX_INPUTS)
				return cli_usage(&mk_cmd_report, "at most %d --sweep files", RP_MAX_INPUTS);
			r->sweeps[r->nsweeps++] = optarg;
			break;
		case RP_OPT_QUICK: r->quick = true; break;
		case RP_OPT_ONLY: r->only = optarg; break;
		case RP_OPT_QUIET: r->verbose = false; break;
		case 'h': cli_help(&mk_cmd_report); return MK_EXIT_OK;
		default: return cli_bad_option(&mk_cmd_report, argv, opt);
		}
	}
	if (optind < argc)
		return cli_usage(&mk_cmd_report, "unexpected argument '%s'", argv[optind]);
	if (!**out)
		return cli_usage(&mk_cmd_report, "--out: empty directory name");
	return r->only ? rp_check_only(r->only) : -1;
}

/* mkdir -p, then the absolute path in r->out. */
static int rp_make_dirs(report *r, const char *out)
{
	char path[4096], sub[4200];
	struct stat st;

	if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode))
		return mk_error_set(MK_EINVAL, "--out '%s' is a file, not a directory", out);
	if (strlen(out) >= sizeof path - 16)
		return mk_error_set(MK_EINVAL, "--out '%s': path too long", out);
	snprintf(path, sizeof path, "%s", out);
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(path, 0777) != 0 && errno != EEXIST)
				return mk_error_errno(errno, "cannot make directory '%s'", path);
			*p = '/';
		}
	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		return mk_error_errno(errno, "cannot make directory '%s'", path);
	if (!realpath(path, r->out))
		return mk_error_errno(errno, "'%s'", path);
	if (access(r->out, W_OK) != 0)
		return mk_error_errno(errno, "'%s' is not a writable directory", out);
	for (int k = 0; k < 2; k++) {
		snprintf(sub, sizeof sub, "%s/%s", r->out, k ? "tables" : "figures");
		if (mkdir(sub, 0777) != 0 && errno != EEXIST)
			return mk_error_errno(errno, "cannot make directory '%s'", sub);
	}
	return MK_OK;
}

static int rp_find_self(report *r, const char *argv0)
{
	ssize_t n = readlink("/proc/self/exe", r->self, sizeof r->self - 1);

	if (n > 0) {
		r->self[n] = '\0';
		return MK_OK;
	}
	if (argv0 && strchr(argv0, '/') && realpath(argv0, r->self))
		return MK_OK;
	return mk_error_set(MK_ESYS, "cannot find the maskkit program to run its commands");
}

/* Paths given relative to where report runs; the children run in DIR. */
static int rp_absolute(char **list, int n, char **store)
{
	char cwd[4096];

	if (!getcwd(cwd, sizeof cwd))
		return mk_error_set(MK_ESYS, "getcwd: %s", strerror(errno));
	for (int k = 0; k < n; k++) {
		if (list[k][0] == '/') {
			store[k] = strdup(list[k]);
		} else {
			size_t len = strlen(cwd) + strlen(list[k]) + 2;
			store[k] = malloc(len);
			if (store[k])
				snprintf(store[k], len, "%s/%s", cwd, list[k]);
		}
		if (!store[k])
			return mk_error_set(MK_ENOMEM, "out of memory");
		list[k] = store[k];
	}
	return MK_OK;
}

static void rp_run_section(report *r, rp_section *s, void (*run)(report *))
{
	s->f = open_memstream(&s->text, &s->len);
	r->cur = s;
	if (r->verbose)
		fprintf(stderr, "maskkit report: %s\n", s->slot);
	if (s->f)
		run(r);
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	r->cur = NULL;
}

static int rp_summary(const report *r, const char *out_arg)
{
	int failed = 0;

	for (int k = 0; k < r->nitems; k++)
		failed += !r->items[k].ok;
	if (!r->only)
		printf("report: %s/index.html (and README.md): %d of %d files made\n", out_arg,
		       r->nitems - failed, r->nitems);
	else
		printf("report: %d of %d files remade in %s\n", r->nitems - failed, r->nitems,
		       out_arg);
	for (int k = 0; k < r->nitems; k++)
		if (!r->items[k].ok)
			printf("  missing %s: %s\n", r->items[k].file, r->items[k].reason);
	if (!failed)
		return MK_EXIT_OK;
	fprintf(stderr, "maskkit: report: %d of %d files could not be made (%s)\n", failed,
		r->nitems, r->only ? "see the messages above" : "the report says why");
	return MK_EXIT_INTERNAL;
}

static int report_run(int argc, char **argv)
{
	char *weights[RP_MAX_INPUTS], *sweeps[RP_MAX_INPUTS];
	char *store[2 * RP_MAX_INPUTS] = {0};
	report r = {.weights = weights, .sweeps = sweeps, .verbose = true};
	rp_section sections[RP_NSECTIONS + 1] = {{.slot = "header"}};
	const char *out = "report";
	int code = rp_parse(&r, &out, argc, argv), ret;

	if (code >= 0)
		return code;
	/* under mpirun the children inherit the launcher's environment: they
	 * run alone, not as ranks of their own */
	setenv("MASKKIT_MPI", "0", 1);
	r.invocation = rp_command((const char *const *)argv, true);
	ret = r.invocation ? rp_find_self(&r, argv[0]) : mk_error_set(MK_ENOMEM, "out of memory");
	if (!ret)
		ret = rp_absolute(r.weights, r.nweights, store);
	if (!ret)
		ret = rp_absolute(r.sweeps, r.nsweeps, store + RP_MAX_INPUTS);
	if (!ret)
		ret = rp_make_dirs(&r, out);
	if (ret) {
		code = cli_fail(ret);
		goto cleanup;
	}
	for (int k = 0; k < RP_NSECTIONS; k++) {
		sections[k + 1].slot = rp_sections[k].name;
		if (rp_selected(&r, rp_sections[k].name))
			rp_run_section(&r, &sections[k + 1], rp_sections[k].run);
	}
	if (!r.only) {
		rp_run_section(&r, &sections[0], rp_section_header);
		ret = rp_render(&r, sections, RP_NSECTIONS + 1);
		if (ret) {
			/* the figures are made; README.md and index.html are not (and an
			 * old pair is left as it was) */
			fprintf(stderr, "maskkit: report: %s\n", mk_error());
			code = MK_EXIT_INTERNAL;
			goto cleanup;
		}
	}
	code = rp_summary(&r, out);
cleanup:
	for (int k = 0; k <= RP_NSECTIONS; k++)
		free(sections[k].text);
	for (int k = 0; k < r.nitems; k++) {
		free(r.items[k].file);
		free(r.items[k].section);
	}
	free(r.items);
	free(r.invocation);
	for (int k = 0; k < 2 * RP_MAX_INPUTS; k++)
		free(store[k]);
	return code;
}

const struct mk_cmd mk_cmd_report = {
	.name = "report",
	.summary = "regenerate the papers' figures and tables (Markdown and HTML)",
	.usage = report_usage,
	.run = report_run,
};
