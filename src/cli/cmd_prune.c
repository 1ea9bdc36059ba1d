/*
 * maskkit prune: from an importance matrix P per head to masks of a target
 * sparsity (SparseBERT's DAM_u per entry, DAM_s per diagonal, one mask per
 * level for progressive pruning), or a mask sampled from logits with the
 * Gumbel-sigmoid.  The masks go to HDF5 as [heads, n, n] or [n, n].
 */
#include "config.h"
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define PRUNE_MAX_LEVELS 1000
#define PRUNE_NAME_LEN 16 /* "0.10" and a margin */

typedef struct prune_opts {
	const char *out, *input;
	double levels[PRUNE_MAX_LEVELS];
	size_t nlevels;
	char (*names)[PRUNE_NAME_LEN]; /* each level as it appears in file names */
	char **outputs;                /* one per level (one for --gumbel) */
	bool structured, no_border, gumbel, json;
	double tau;
	uint64_t seed, max_memory;
} prune_opts;

/* The input and what was made of it: masks[h * nout + l] for head h, level l. */
typedef struct prune_job {
	mk_tensor t;
	int64_t heads, n;
	size_t nout;
	mk_mask **masks;
	mk_prune_result *res;
} prune_job;

/* ---- options ------------------------------------------------------------------ */

static int prune_opt_sparsity(void *opts, const char *arg)
{
	prune_opts *o = opts;
	return cli_sparsities(arg, "--sparsity", o->levels, PRUNE_MAX_LEVELS, &o->nlevels);
}

static int prune_opt_tau(void *opts, const char *arg)
{
	prune_opts *o = opts;
	char *end;

	errno = 0;
	o->tau = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(o->tau) || !(o->tau > 0.0))
		return mk_error_set(MK_EINVAL, "--tau must be a positive number, got '%s'", arg);
	return MK_OK;
}

static const struct cli_opt prune_table[] = {
	CLI_OPT_CALL("sparsity", 0, prune_opt_sparsity, "S",  NULL,
		     "target sparsity 1 - |M|/n^2: S, S1,S2,... or A..B[:STEP], percentages (90, "
		     "50..90:20, 90%) or fractions (0.9); each level is pruned from P (see below)"),
	CLI_OPT_WRITE("output", 'o', prune_opts, out, "FILE",
		     "the output; with several levels it must hold '{}' (see below)"),
	CLI_OPT_FLAG("structured", 0, prune_opts, structured,
		     "prune whole diagonals (DAM_s) instead of entries"),
	CLI_OPT_FLAG("no-border", 0, prune_opts, no_border,
		     "with --structured: do not keep the first and last rows and columns"),
	CLI_OPT_FLAG("gumbel", 0, prune_opts, gumbel, "sample a mask from logits instead of pruning"),
	CLI_OPT_CALL("tau", 0, prune_opt_tau, "T", "1", "Gumbel temperature T > 0 (no change to the mask: see above)"),
	CLI_OPT_UINT("seed", 0, prune_opts, seed, "SEED", "0", "Gumbel seed"),
	CLI_OPT_FLAG("json", 0, prune_opts, json, "machine-readable report"),
	CLI_OPT_SIZE("max-memory", 0, prune_opts, max_memory, "SIZE", "4G",
		     "limit for the input and the masks held"),
	CLI_OPT_END,
};

/* Option combinations that make no sense, before any work. */
static int prune_check_modes(const prune_opts *o, const cli_args *a)
{
	bool levels = cli_given(a, "sparsity");

	if (o->gumbel && (levels || o->structured))
		return cli_usage_error(&mk_cmd_prune, "--gumbel samples a mask: it takes no "
				       "--sparsity or --structured");
	if (!o->gumbel && (cli_given(a, "seed") || cli_given(a, "tau")))
		return cli_usage_error(&mk_cmd_prune, "--tau and --seed are for --gumbel");
	if (!o->gumbel && !levels)
		return cli_usage_error(&mk_cmd_prune, "missing --sparsity S (or --gumbel)");
	if (o->no_border && !o->structured)
		return cli_usage_error(&mk_cmd_prune, "--no-border is for --structured");
	if (!o->out)
		return cli_usage_error(&mk_cmd_prune, "missing -o OUT.h5");
	if (mk_format_from_path(o->out) != MK_FMT_H5)
		return cli_usage_error(&mk_cmd_prune, "-o '%s': prune writes HDF5, name it .h5",
				       o->out);
	if (a->argc < 1)
		return cli_usage_error(&mk_cmd_prune, "missing the importance file P.h5");
	if (a->argc > 1)
		return cli_usage_error(&mk_cmd_prune, "one input file at a time, got '%s' and '%s'",
				       a->argv[0], a->argv[1]);
	return MK_OK;
}

/* pattern with each '{}' replaced by level; *out is malloc'd. */
static int prune_output_name(const char *pattern, const char *level, char **out)
{
	size_t cap = strlen(pattern) * (strlen(level) + 1) + 1, used = 0;
	char *buf = malloc(cap);

	if (!(*out = buf))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (const char *c = pattern; *c;) {
		bool brace = !strncmp(c, "{}", 2);
		const char *s = brace ? level : c;
		size_t len = brace ? strlen(level) : 1;
		memcpy(buf + used, s, len);
		used += len;
		c += brace ? 2 : 1;
	}
	buf[used] = '\0';
	return MK_OK;
}

/* The output name of each level: '{}' in -o becomes the level ("0.10"). */
static int prune_name_outputs(prune_opts *o)
{
	size_t nout = o->gumbel ? 1 : o->nlevels;
	bool braces = strstr(o->out, "{}") != NULL;

	if (o->gumbel && braces)
		return cli_usage_error(&mk_cmd_prune, "'{}' in -o stands for a sparsity level; "
				       "--gumbel writes one file");
	if (nout > 1 && !braces)
		return cli_usage_error(&mk_cmd_prune, "%zu sparsity levels need '{}' in -o (as in "
				       "-o 'mask-{}.h5')", nout);
	o->names = calloc(nout, sizeof *o->names);
	o->outputs = calloc(nout, sizeof *o->outputs);
	if (!o->names || !o->outputs)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t l = 0; l < nout; l++) {
		int ret;
		snprintf(o->names[l], sizeof o->names[l], "%.2f", o->gumbel ? 0.0 : o->levels[l]);
		for (size_t k = 0; k < l; k++)
			if (!strcmp(o->names[k], o->names[l]))
				return cli_usage_error(&mk_cmd_prune, "levels %g and %g would both "
						       "be written as '%s'", o->levels[k],
						       o->levels[l], o->names[l]);
		if ((ret = prune_output_name(o->out, o->names[l], &o->outputs[l])) ||
		    (ret = cli_check_output_dir(o->outputs[l])))
			return ret;
	}
	return MK_OK;
}

static void prune_opts_release(prune_opts *o)
{
	for (size_t l = 0; o->outputs && l < (o->gumbel ? 1 : o->nlevels); l++)
		free(o->outputs[l]);
	free(o->outputs);
	free(o->names);
}

/* ---- the work ------------------------------------------------------------------- */

static int prune_read(const prune_opts *o, prune_job *j)
{
	const mk_tensor *t = &j->t;
	char shape[96];
	int ret;

	if ((ret = mk_tensor_read(o->input, o->max_memory, &j->t)))
		return ret;
	mk_tensor_shape_text(t, shape, sizeof shape);
	if (t->rank > 3)
		return mk_error_set(MK_EFORMAT, "'%s': rank %d %s; prune reads P as [n, n] or "
				    "[heads, n, n]", o->input, t->rank, shape);
	if (t->dims[t->rank - 1] != t->dims[t->rank - 2])
		return mk_error_set(MK_EFORMAT, "'%s': shape %s is not square in its last two "
				    "axes", o->input, shape);
	j->heads = t->rank == 3 ? t->dims[0] : 1;
	j->n = t->dims[t->rank - 1];
	return MK_OK;
}

/* All masks at once: each head is ranked once for all its levels. */
static int prune_alloc(const prune_opts *o, prune_job *j)
{
	uint64_t count, bytes;
	int ret;

	j->nout = o->gumbel ? 1 : o->nlevels;
	if ((ret = mk_mul_u64((uint64_t)j->heads, j->nout, &count)) ||
	    (ret = mk_mul_u64(count, mk_words(j->n) * 8 * (uint64_t)j->n, &bytes)))
		return mk_error_set(MK_ERANGE, "%" PRId64 " heads x %zu levels of masks of n = %"
				    PRId64 " are too many", j->heads, j->nout, j->n);
	if ((ret = mk_check_memory(bytes, o->max_memory, "the pruned masks")))
		return ret;
	j->masks = calloc(count, sizeof *j->masks);
	j->res = calloc(count, sizeof *j->res);
	if (!j->masks || !j->res)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (uint64_t k = 0; k < count; k++)
		if ((ret = mk_mask_new(j->n, 0, &j->masks[k])))
			return ret;
	return MK_OK;
}

static int prune_compute(const prune_opts *o, prune_job *j)
{
	mk_prune_mode mode = o->structured ? MK_PRUNE_DIAGONAL : MK_PRUNE_ENTRY;
	uint64_t cells = (uint64_t)j->n * (uint64_t)j->n;
	int ret = MK_OK;

	for (int64_t h = 0; h < j->heads && !ret; h++) {
		const float *p = j->t.data + (uint64_t)h * cells;
		size_t at = (size_t)h * j->nout;
		if (o->gumbel)
			ret = mk_gumbel_mask(p, j->n, o->tau, o->seed,
					     (uint64_t)h, j->masks[at], &j->res[at]);
		else
			ret = mk_prune_levels(p, j->n, o->levels, o->nlevels, mode,
					      o->structured && !o->no_border, j->masks + at,
					      j->res + at);
	}
	if (ret) {
		mk_error_prefix("'%s': ", o->input);
		return ret;
	}
	return MK_OK;
}

typedef struct prune_rows {
	const prune_job *j;
	size_t level;
} prune_rows;

static void prune_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	const prune_rows *r = ctx;
	const mk_mask *m = r->j->masks[(size_t)k * r->j->nout + r->level];
	memcpy(dst, mk_mask_crow(m, i), mk_words(r->j->n) * sizeof *dst);
}

static int prune_write(const prune_opts *o, const prune_job *j, size_t level)
{
	char expr[256];
	prune_rows rows = {.j = j, .level = level};

	if (o->gumbel)
		snprintf(expr, sizeof expr, "prune(gumbel, tau=%g, seed=%" PRIu64 ") of %s",
			 o->tau, o->seed, o->input);
	else
		snprintf(expr, sizeof expr, "prune(%s, sparsity=%g) of %s",
			 !o->structured ? "entry" : o->no_border ? "diagonal, no border" : "diagonal",
			 o->levels[level], o->input);
	return mk_write_stack_h5(o->outputs[level],
				 &(mk_stack){.layers = 0, .heads = j->t.rank == 3 ? j->heads : 0,
					     .n = j->n, .row = prune_row, .ctx = &rows,
					     .expr = expr});
}

/* ---- reports ---------------------------------------------------------------------- */

static const char *prune_mode_text(const prune_opts *o)
{
	if (o->gumbel)
		return "gumbel";
	return o->structured ? "diagonal" : "entry";
}

static const char *prune_toeplitz_text(const mk_prune_result *r)
{
	return r->toeplitz ? "yes" : r->toeplitz_interior ? "interior" : "no";
}

static void prune_print_head(const prune_opts *o, const prune_job *j)
{
	printf("input     %s: %" PRId64 " head%s, n = %" PRId64 " (%s)\n", o->input, j->heads,
	       j->heads == 1 ? "" : "s", j->n, mk_dtype_name(j->t.dtype));
	if (o->gumbel)
		printf("mode      gumbel-sigmoid, tau = %g, seed = %" PRIu64 "\n",
		       o->tau, o->seed);
	else if (o->structured)
		printf("mode      diagonal (DAM_s)%s\n", o->no_border ? ", no border" :
		       ", first and last rows and columns kept");
	else
		printf("mode      entry (DAM_u)\n");
}

static void prune_print_level(const prune_opts *o, const prune_job *j, size_t l)
{
	if (o->gumbel)
		printf("\nwrote %s\n%6s %10s %10s %12s %9s\n", o->outputs[l], "head", "sparsity",
		       "expected", "kept", "toeplitz");
	else if (o->structured)
		printf("\ntarget %g: wrote %s\n%6s %10s %12s %10s %9s\n", o->levels[l],
		       o->outputs[l], "head", "sparsity", "kept", "diagonals", "toeplitz");
	else
		printf("\ntarget %g: wrote %s\n%6s %10s %12s %9s\n", o->levels[l], o->outputs[l],
		       "head", "sparsity", "kept", "toeplitz");
	for (int64_t h = 0; h < j->heads; h++) {
		const mk_prune_result *r = &j->res[(size_t)h * j->nout + l];
		if (o->gumbel)
			printf("%6" PRId64 " %10.6f %10.6f %12" PRIu64 " %9s\n", h, r->sparsity,
			       r->expected, r->kept, prune_toeplitz_text(r));
		else if (o->structured)
			printf("%6" PRId64 " %10.6f %12" PRIu64 " %10" PRId64 " %9s\n", h,
			       r->sparsity, r->kept, r->diagonals, prune_toeplitz_text(r));
		else
			printf("%6" PRId64 " %10.6f %12" PRIu64 " %9s\n", h, r->sparsity, r->kept,
			       prune_toeplitz_text(r));
	}
}

static cJSON *prune_json_level(const prune_opts *o, const prune_job *j, size_t l)
{
	cJSON *x = cJSON_CreateObject(), *heads;
	if (o->gumbel)
		cJSON_AddNullToObject(x, "target");
	else
		cJSON_AddNumberToObject(x, "target", o->levels[l]);
	cJSON_AddStringToObject(x, "output", o->outputs[l]);
	heads = cJSON_AddArrayToObject(x, "heads");
	for (int64_t h = 0; h < j->heads; h++) {
		const mk_prune_result *r = &j->res[(size_t)h * j->nout + l];
		cJSON *y = cJSON_CreateObject();
		cJSON_AddNumberToObject(y, "head", (double)h);
		cJSON_AddNumberToObject(y, "sparsity", r->sparsity);
		cJSON_AddNumberToObject(y, "kept", (double)r->kept);
		if (r->diagonals >= 0)
			cJSON_AddNumberToObject(y, "diagonals", (double)r->diagonals);
		if (o->gumbel)
			cJSON_AddNumberToObject(y, "expected_sparsity", r->expected);
		cJSON_AddBoolToObject(y, "toeplitz", r->toeplitz);
		cJSON_AddBoolToObject(y, "toeplitz_interior", r->toeplitz_interior);
		cJSON_AddItemToArray(heads, y);
	}
	return x;
}

static cJSON *prune_json(const prune_opts *o, const prune_job *j)
{
	cJSON *x = cJSON_CreateObject(), *levels;
	cJSON_AddStringToObject(x, "input", o->input);
	cJSON_AddNumberToObject(x, "rank", j->t.rank);
	cJSON_AddNumberToObject(x, "heads", (double)j->heads);
	cJSON_AddNumberToObject(x, "n", (double)j->n);
	cJSON_AddStringToObject(x, "mode", prune_mode_text(o));
	cJSON_AddBoolToObject(x, "border", o->structured && !o->no_border);
	if (o->gumbel) {
		cJSON_AddNumberToObject(x, "tau", o->tau);
		cJSON_AddNumberToObject(x, "seed", (double)o->seed);
	}
	levels = cJSON_AddArrayToObject(x, "levels");
	for (size_t l = 0; l < j->nout; l++)
		cJSON_AddItemToArray(levels, prune_json_level(o, j, l));
	return x;
}

static void prune_job_release(prune_job *j)
{
	for (size_t k = 0; j->masks && k < (size_t)j->heads * j->nout; k++)
		mk_mask_free(j->masks[k]);
	free(j->masks);
	free(j->res);
	mk_tensor_release(&j->t);
}

static int prune_exec(void *opts, const cli_args *a)
{
	prune_opts *o = opts;
	prune_job j = {0};
	int ret;

	if ((ret = prune_check_modes(o, a)))
		return ret;
	o->input = a->argv[0];
	if ((ret = prune_name_outputs(o)) || (ret = prune_read(o, &j)) ||
	    (ret = prune_alloc(o, &j)) || (ret = prune_compute(o, &j)))
		goto out;
	if (!o->json)
		prune_print_head(o, &j);
	for (size_t l = 0; l < j.nout; l++) {
		if ((ret = prune_write(o, &j, l)))
			goto out;
		if (!o->json)
			prune_print_level(o, &j, l);
	}
	if (o->json)
		ret = cli_json_out(prune_json(o, &j));
out:
	prune_job_release(&j);
	prune_opts_release(o);
	return ret;
}

const struct mk_cmd mk_cmd_prune = {
	.name = "prune",
	.summary = "masks from importance matrices: top entries, top diagonals, Gumbel samples",
	.synopsis = "P.h5 --sparsity S -o OUT.h5 [--structured [--no-border]] [--json]\n"
		     "ALPHA.h5 --gumbel [--tau T] [--seed SEED] -o OUT.h5 [--json]",
	.opts = prune_table,
	.opts_size = sizeof(prune_opts),
	.exec = prune_exec,
	.description =
"Turns an importance matrix P per head (e.g. the mean attention map, or\n"
"DAM's sigmoid(alpha)) into a binary mask of a target sparsity, as SparseBERT\n"
"(Shi et al., 2021) prunes its learned masks.  P is read as a tensor: FILE.h5\n"
"(its only dataset of rank 2 to 4), FILE.h5:/path or FILE.npy, float32 or\n"
"float64, [n, n] or [heads, n, n]; NaN and Inf are refused.  The masks are\n"
"written as the uint8 dataset \"mask\" of OUT.h5: [heads, n, n] for [heads, n, n]\n"
"input, a plain [n, n] mask for [n, n] input (which `maskkit measure OUT.h5`\n"
"reads like any mask file).\n"
"\n"
"Unstructured (default, DAM_u): each head keeps the k cells of largest P, k\n"
"the integer nearest (1 - S) n^2 (a half goes to the sparser mask, also when\n"
"binary rounding of a decimal S puts it a hair above), so the sparsity is the\n"
"target to within half a cell.  Equal values are taken in index order\n"
"i*n + j (-0 equals +0): the ranking is one total order, and the masks of\n"
"several levels are nested.\n"
"\n"
"Structured (--structured, DAM_s): each diagonal offset d = j - i scores the\n"
"mean of P along it; offsets are ranked by score, ties to the smaller |d| and\n"
"then to the negative d.  Of the 2n masks keeping the m best diagonals\n"
"(m = 0..2n-1) the one with the sparsity nearest the target is written (a tie\n"
"goes to the sparser); 'diagonals' reports m.  The first and last rows and\n"
"columns are always kept, as DAM_s keeps [CLS] and [SEP]: the mask is then\n"
"Toeplitz on its interior (rows and columns 1..n-2) but usually not as a\n"
"whole, so `maskkit measure` says 'toeplitz no'.  With --no-border only the\n"
"diagonals are kept and the mask is exactly Toeplitz (measure says yes).  The\n"
"toeplitz column is checked on the written mask: yes (M[i][j] = M[i+1][j+1]\n"
"everywhere), interior (only away from the border) or no.\n"
"\n"
"Gumbel (--gumbel): reads logits alpha and samples each cell as SparseBERT's\n"
"Gumbel-sigmoid, kept when sigmoid((alpha + G1 - G2) / T) > 0.5 with G =\n"
"-log(-log U), U uniform in (0, 1).  That is alpha + G1 - G2 > 0 for any\n"
"T > 0: T scales the relaxation used in training but does not change the\n"
"thresholded mask; a cell is kept with probability sigmoid(alpha), and\n"
"'expected' is 1 - the mean of sigmoid(alpha).  The noise of head h, row i\n"
"comes from maskkit's generator keyed by (seed, h n + i), so a seed gives the\n"
"same mask on any number of threads.\n",
	.notes = CLI_SPARSITY_NOTE
"So 90, 90% and 0.9 are one level, and 10..90 (or 0.1..0.9) nine.  With\n"
"several levels -o must hold '{}', replaced by the level with two decimals\n"
"(mask-{}.h5: mask-0.10.h5, ...); levels that print alike are an error.\n"
"\n"
"Prints per level and head the achieved sparsity, the cells kept, the\n"
"diagonals kept (--structured) and whether the mask is Toeplitz.  All masks\n"
"are made before the first file is written; each file is written to a\n"
"temporary name and renamed, so a failure leaves an existing file intact.\n",
	.examples =
"  maskkit prune attn.h5:/importance --sparsity 0.9 -o dam_u.h5\n"
"  maskkit prune p.npy --structured --sparsity 50..90:20 -o 'dam_s-{}.h5' --json\n"
"  maskkit prune alpha.npy --gumbel --seed 7 -o sample.h5\n",
};
