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
	{"attention", rp_section_attention},
	{"heads", rp_section_heads},
	{"dam", rp_section_dam},
	{"axis", rp_section_axis},
	{"explain", rp_section_explain},
	{"sweep", rp_section_sweep},
};
#define RP_NSECTIONS (int)(sizeof rp_sections / sizeof *rp_sections)

typedef struct rp_opts {
	const char *out, *only, *model, *text;
	int64_t samples;
	cli_list weights, sweeps;
	bool quick, quiet, json;
} rp_opts;

static const struct cli_opt rp_table[] = {
	CLI_OPT_FILE("out", 'o', rp_opts, out, "DIR",
		     "output directory (default report; made if missing)"),
	{.name = "output", .type = CLI_FILE, .off = offsetof(rp_opts, out), .meta = "DIR",
	 .flags = CLI_HIDDEN}, /* -o's long name elsewhere: the same option */
	CLI_OPT_READ_AS("weights", 0, CLI_LIST, rp_opts, weights, "MODEL",
		     "a model's weights for the TISA section (repeatable): a model directory, "
		     ".safetensors, HDF5 or .npy (E_P); F.h5:/path names its position embeddings"),
	CLI_OPT_READ_AS("model", 0, CLI_STRING, rp_opts, model, "DIR",
		       "the model studied: a HuggingFace directory (default $MASKKIT_MODEL, else "
		       "~/.cache/maskkit/all-MiniLM-L6-v2 when tools/fetch-model.sh fetched it; "
		       "'none': the synthetic BERT the report writes)"),
	CLI_OPT_READ("text", 0, rp_opts, text, "FILE",
		     "the text the model reads, split into sentences (default "
		     "/usr/share/common-licenses/GPL-3)"),
	CLI_OPT_INT("samples", 0, rp_opts, samples, "K", 1, 100000, NULL,
		    "sentences encoded (default 200; 48 with --quick)"),
	CLI_OPT_READ_AS("sweep", 0, CLI_LIST, rp_opts, sweeps, "F.csv",
		     "results of 'maskkit sweep -o F.csv' (repeatable)"),
	CLI_OPT_FLAG("quick", 0, rp_opts, quick, "smaller explain and sweep runs (under 2 minutes)"),
	CLI_OPT_STRING("only", 0, rp_opts, only, "S,...",
		       "remake only these sections' figures and tables (README.md and index.html "
		       "are left as they are)"),
	CLI_OPT_FLAG("quiet", 0, rp_opts, quiet, "do not echo each command on stderr"),
	CLI_OPT_FLAG("json", 0, rp_opts, json,
		     "what was written, as JSON on stdout, instead of the summary"),
	CLI_OPT_END,
};

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
			return cli_usage_error(&mk_cmd_report, "--only: unknown section '%.*s'", (int)n,
					       p);
		p += n + (end != NULL);
	}
	return MK_OK;
}

/* The options into r (weights and sweeps: copies of the lists, made
 * absolute later), and this report's own command line, as the page shows
 * it: the options in a fixed order, whatever order they were given in. */
static int rp_setup(report *r, const rp_opts *o, const cli_args *a)
{
	const char *argv[2 * 2 * RP_MAX_INPUTS + 20];
	int n = 0;

	if (a->argc > 0)
		return cli_usage_error(&mk_cmd_report, "unexpected argument '%s'", a->argv[0]);
	if (o->weights.n > RP_MAX_INPUTS)
		return cli_usage_error(&mk_cmd_report, "at most %d --weights files", RP_MAX_INPUTS);
	if (o->sweeps.n > RP_MAX_INPUTS)
		return cli_usage_error(&mk_cmd_report, "at most %d --sweep files", RP_MAX_INPUTS);
	if (o->only && rp_check_only(o->only))
		return MK_EINVAL;
	snprintf(r->samples_text, sizeof r->samples_text, "%lld", (long long)o->samples);
	argv[n++] = "report";
	argv[n++] = "--out";
	argv[n++] = o->out;
	for (int k = 0; k < o->weights.n; k++) {
		argv[n++] = "--weights";
		argv[n++] = r->weights[r->nweights++] = (char *)o->weights.v[k];
	}
	for (int k = 0; k < o->sweeps.n; k++) {
		argv[n++] = "--sweep";
		argv[n++] = r->sweeps[r->nsweeps++] = (char *)o->sweeps.v[k];
	}
	if (o->model) {
		argv[n++] = "--model";
		argv[n++] = o->model;
	}
	if (o->text) {
		argv[n++] = "--text";
		argv[n++] = o->text;
	}
	if (o->samples) {
		argv[n++] = "--samples";
		argv[n++] = r->samples_text;
	}
	if (o->quick)
		argv[n++] = "--quick";
	if (o->only) {
		argv[n++] = "--only";
		argv[n++] = o->only;
	}
	if (o->quiet)
		argv[n++] = "--quiet";
	if (o->json)
		argv[n++] = "--json";
	argv[n] = NULL;
	r->only = o->only;
	r->quick = o->quick;
	r->model_opt = o->model;
	r->text = o->text;
	r->samples = o->samples;
	r->verbose = !o->quiet;
	r->invocation = rp_command(argv, true);
	return r->invocation ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");
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

/* The summary on stdout (--json: the directory, and each promised file with
 * whether it was made); CLI_DONE_SYS (exit 1) when a file is missing. */
static int rp_summary(const report *r, const char *out_arg, bool json)
{
	rp_result made = {0};
	int failed = 0, ret = MK_OK;

	for (int k = 0; k < r->nitems; k++)
		failed += !r->items[k]->ok;
	if (json) {
		if (!(ret = rp_result_make(r, out_arg, &made)))
			ret = mk_emit(stdout, MK_EMIT_JSON, &rp_result_record, &made, 1, 0);
	} else if (!r->only) {
		printf("report: %s/index.html (and README.md): %d of %d files made\n", out_arg,
		       r->nitems - failed, r->nitems);
	} else {
		printf("report: %d of %d files remade in %s\n", r->nitems - failed, r->nitems,
		       out_arg);
	}
	for (int k = 0; !json && k < r->nitems; k++)
		if (!r->items[k]->ok)
			printf("  missing %s: %s\n", r->items[k]->file, r->items[k]->reason);
	rp_result_release(&made);
	if (ret || !failed)
		return ret;
	fprintf(stderr, "maskkit: report: %d of %d files could not be made (%s)\n", failed,
		r->nitems, r->only ? "see the messages above" : "the report says why");
	return CLI_DONE_SYS;
}

/* Runs the sections chosen, then renders the page (without --only). */
static int rp_make(report *r, rp_section *sections)
{
	for (int k = 0; k < RP_NSECTIONS; k++) {
		sections[k + 1].slot = rp_sections[k].name;
		if (rp_selected(r, rp_sections[k].name))
			rp_run_section(r, &sections[k + 1], rp_sections[k].run);
	}
	if (r->only)
		return MK_OK;
	rp_run_section(r, &sections[0], rp_section_header);
	if (rp_render(r, sections, RP_NSECTIONS + 1)) {
		/* the figures are made; README.md and index.html are not (and an old
		 * pair is left as it was) */
		fprintf(stderr, "maskkit: report: %s\n", mk_error());
		return CLI_DONE_SYS;
	}
	return MK_OK;
}

static int report_exec(void *opts, const cli_args *a)
{
	rp_opts *o = opts;
	char *weights[RP_MAX_INPUTS], *sweeps[RP_MAX_INPUTS];
	char *store[2 * RP_MAX_INPUTS + 2] = {0};
	report r = {.weights = weights, .sweeps = sweeps};
	rp_section sections[RP_NSECTIONS + 1] = {{.slot = "header"}};
	int ret;

	if (!o->out)
		o->out = "report";
	if ((ret = rp_setup(&r, o, a)))
		goto cleanup;
	/* under mpirun the children inherit the launcher's environment: they
	 * run alone, not as ranks of their own */
	setenv("MASKKIT_MPI", "0", 1);
	if ((ret = rp_find_self(&r, NULL)) ||
	    (ret = rp_absolute(r.weights, r.nweights, store)) ||
	    (ret = rp_absolute(r.sweeps, r.nsweeps, store + RP_MAX_INPUTS)) ||
	    (r.model_opt && strcmp(r.model_opt, "none") &&
	     (ret = rp_absolute((char **)&r.model_opt, 1, store + 2 * RP_MAX_INPUTS))) ||
	    (r.text && (ret = rp_absolute((char **)&r.text, 1, store + 2 * RP_MAX_INPUTS + 1))) ||
	    (ret = rp_make_dirs(&r, o->out)) || (ret = rp_make(&r, sections)))
		goto cleanup;
	ret = rp_summary(&r, o->out, o->json);
cleanup:
	for (int k = 0; k <= RP_NSECTIONS; k++)
		free(sections[k].text);
	for (int k = 0; k < r.nitems; k++) {
		free(r.items[k]->file);
		free(r.items[k]->section);
		free(r.items[k]);
	}
	free(r.items);
	free(r.invocation);
	free(r.model.encode_cmd);
	for (int k = 0; k < 2 * RP_MAX_INPUTS + 2; k++)
		free(store[k]);
	return ret;
}

const struct mk_cmd mk_cmd_report = {
	.name = "report",
	.summary = "regenerate the papers' figures and tables (Markdown and HTML)",
	.synopsis = "[--out DIR] [--weights MODEL]... [--sweep F.csv]...\n"
		    " [--quick] [--only SECTION,...] [--quiet] [--json]",
	.opts = rp_table,
	.opts_size = sizeof(rp_opts),
	.exec = report_exec,
	.description =
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
"                    mean over samples at their own lengths (synthetic lengths,\n"
"                    then the model's real attention kept as a mask)\n"
"  tisa              TISA Fig. 1 and 2: P = E_P E_P^T and the Toeplitz R^2 of\n"
"                    each --weights file (none given: synthetic example models\n"
"                    written by examples/make_tf_model.py, labelled so)\n"
"  attention         the model's attention on the text: diagonal, [CLS],\n"
"                    [SEP], entropy per layer, the offset profile, mean maps\n"
"  heads             what each head does: its role (previous-token, next-token,\n"
"                    local band, [CLS]/[SEP] sink, broad, mixed) in a grid\n"
"  dam               SparseBERT's DAM masks pruned from each head's mean map\n"
"  axis              Adaptive Axis Attention Table 6 from the real attention\n"
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
"no timestamps).\n",
	.notes =
"It prints a summary of the files made, or with --json an object: out (DIR as\n"
"given), directory (absolute), page (README.md and index.html written: not\n"
"with --only), made and promised (counts), and files, each with file\n"
"(relative to DIR), section, made and reason (null when made).\n"
"\n"
"Environment: PYTHON (default python3) runs make_tf_model.py, found in\n"
"MASKKIT_EXAMPLES, the source tree's examples/ or the installed data;\n"
"MASKKIT_TEMPLATES and MASKKIT_GNUPLOT as for every plot.  The exit status\n"
"is 1 when the report lacks figures (named on stderr and in the report).\n",
	.examples =
"  maskkit report --out report --quick\n"
"  maskkit report --out report --only sparsebert-fig1,aaa-fig1 --json\n"
"  maskkit report --weights tf_model.h5 --sweep sweep.csv\n",
};
