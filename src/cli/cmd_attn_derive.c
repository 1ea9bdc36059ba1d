/*
 * maskkit attn-derive: what other commands need, read off a model's
 * attention probabilities (`maskkit encode` output): the mean map per head
 * (for `maskkit prune`, as SparseBERT prunes DAM's importance) and AAA-style
 * row and column indicators (for `maskkit axis`).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "plot.h"

typedef struct ad_opts {
	mk_dataset_opts d;
	const char *mean_map, *indicators, *png;
	int64_t size, layer;
	double col_factor, row_entropy;
	bool json;
} ad_opts;

static const struct cli_opt ad_table[] = {
	CLI_OPT_STRING("dataset", 0, ad_opts, d.dataset, "PATH",
		       "the probabilities (default as attn-stats finds them); FILE.h5:/PATH too"),
	CLI_OPT_WRITE("mean-map", 0, ad_opts, mean_map, "OUT.h5",
		     "write the mean map of each layer as dataset layer_L [heads, M, M]"),
	CLI_OPT_INT("size", 0, ad_opts, size, "M", 1, MK_N_MAX, NULL,
		    "the mean map's size (default: the median sample length)"),
	CLI_OPT_WRITE("png", 0, ad_opts, png, "FILE.png",
		     "heatmaps of the mean map of --layer's heads (colours: 1st to 99th "
		     "percentile of each head)"),
	CLI_OPT_INT("layer", 0, ad_opts, layer, "L", 0, 100000, "0",
		    "the layer --png draws (0-based)"),
	CLI_OPT_WRITE("indicators", 0, ad_opts, indicators, "OUT.h5",
		     "write row and column indicators 'rows', 'cols' [samples, layers, heads, N] "
		     "(float32 0/1) for maskkit axis"),
	CLI_OPT_DOUBLE("col-factor", 0, ad_opts, col_factor, "F", 0, 1e9, CLI_LO_OPEN, "2",
		       "a column is important when it receives F times a uniform share"),
	CLI_OPT_DOUBLE("row-entropy", 0, ad_opts, row_entropy, "R", 0, 1, 0, "0.9",
		       "a row is important when its entropy is at least R ln N_i"),
	CLI_OPT_SIZE("max-memory", 0, ad_opts, d.max_memory, "SIZE", "4G",
		     "limit for what is held in memory"),
	CLI_OPT_FLAG("json", 0, ad_opts, json, "machine-readable summary"),
	CLI_OPT_END,
};

static int ad_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t ad_median_length(const mk_dataset_info *in, const int64_t *len)
{
	int64_t *v = malloc((size_t)in->samples * sizeof *v), m;

	if (!v)
		return in->n;
	memcpy(v, len, (size_t)in->samples * sizeof *v);
	qsort(v, (size_t)in->samples, sizeof *v, ad_cmp_i64);
	m = v[(in->samples - 1) / 2];
	free(v);
	return m;
}

/* Several datasets into one file, all or nothing: into a temporary file in
 * the same folder, renamed at the end. */
static int ad_tmp_name(const char *out, char **tmp)
{
	if (asprintf(tmp, "%s.tmp.%ld.h5", out, (long)getpid()) < 0) {
		*tmp = NULL;
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	return MK_OK;
}

static int ad_finish(int ret, char *tmp, const char *out)
{
	if (ret == MK_OK && rename(tmp, out) != 0)
		ret = mk_error_errno(errno, "'%s'", out);
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

static int ad_png(const ad_opts *o, const mk_dataset_info *in, int64_t m, const double *map)
{
	const double **mats = calloc((size_t)in->heads, sizeof *mats);
	char **labels = calloc((size_t)in->heads, sizeof *labels), title[160];
	int ret = mats && labels ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	if (ret == MK_OK && o->layer >= in->layers)
		ret = mk_error_set(MK_EINVAL, "--layer %" PRId64 ": the data has %" PRId64
				   " layers (0..%" PRId64 ")", o->layer, in->layers, in->layers - 1);
	for (int64_t h = 0; ret == MK_OK && h < in->heads; h++) {
		mats[h] = map + (o->layer * in->heads + h) * m * m;
		if (asprintf(&labels[h], "head %" PRId64, h) < 0) {
			labels[h] = NULL;
			ret = mk_error_set(MK_ENOMEM, "out of memory");
		}
	}
	snprintf(title, sizeof title, "mean attention, layer %" PRId64 ", first %" PRId64
		 " tokens (query down, key across)", o->layer, m);
	mk_heatmap_opts ho = {.title = title, .labels = (const char *const *)labels};
	if (ret == MK_OK && (ret = mk_range_parse("p1", &ho.range)) == MK_OK)
		ret = mk_png_heatmaps(o->png, mats, (int)in->heads, m, m,
				      in->heads > 4 ? 4 : (int)in->heads, &ho);
	for (int64_t h = 0; labels && h < in->heads; h++)
		free(labels[h]);
	free(labels);
	free(mats);
	return ret;
}

static int ad_write_mean(mk_dataset *d, const ad_opts *o, cJSON *j)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	int64_t m = o->size ? o->size : ad_median_length(in, mk_dataset_lengths(d)), used;
	mk_tensor t = {0};
	double *map = NULL;
	char *tmp = NULL;
	int ret;

	if ((ret = mk_attn_mean_map(d, m, o->d.max_memory, cli_progress, NULL, &map, &used)) ||
	    (ret = mk_tensor_new(3, (int64_t[]){in->heads, m, m}, MK_DTYPE_F32, o->d.max_memory,
				 "the mean map", &t)) ||
	    (ret = ad_tmp_name(o->mean_map, &tmp)))
		goto cleanup;
	for (int64_t l = 0; l < in->layers && ret == MK_OK; l++) {
		char name[32];
		for (int64_t c = 0; c < in->heads * m * m; c++)
			t.data[c] = (float)map[l * in->heads * m * m + c];
		snprintf(name, sizeof name, "layer_%" PRId64, l);
		ret = mk_tensor_write(&t, tmp, name, MK_DTYPE_F32);
	}
	ret = ad_finish(ret, tmp, o->mean_map);
	tmp = NULL;
	if (ret == MK_OK && o->png)
		ret = ad_png(o, in, m, map);
	if (ret == MK_OK) {
		cJSON *x = cJSON_AddObjectToObject(j, "mean_map");
		cJSON_AddStringToObject(x, "output", o->mean_map);
		cJSON_AddNumberToObject(x, "size", (double)m);
		cJSON_AddNumberToObject(x, "samples", (double)used);
		cJSON_AddNumberToObject(x, "layers", (double)in->layers);
	}
cleanup:
	free(tmp);
	free(map);
	mk_tensor_release(&t);
	return ret;
}

static double ad_share(const uint8_t *x, const mk_dataset_info *in, const int64_t *len)
{
	uint64_t on = 0, real = 0;

	for (int64_t s = 0; s < in->samples; s++)
		for (int64_t c = 0; c < in->layers * in->heads; c++) {
			const uint8_t *row = x + (s * in->layers * in->heads + c) * in->n;
			for (int64_t t = 0; t < len[s]; t++)
				on += row[t];
			real += (uint64_t)len[s];
		}
	return real ? (double)on / (double)real : 0;
}

static int ad_write_indicators(mk_dataset *d, const ad_opts *o, cJSON *j)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	const int64_t *len = mk_dataset_lengths(d);
	uint8_t *ind[2] = {NULL, NULL};
	const char *names[2] = {"rows", "cols"};
	mk_tensor t = {0};
	char *tmp = NULL;
	int ret;

	if ((ret = mk_attn_indicators(d, o->col_factor, o->row_entropy, o->d.max_memory,
				      cli_progress, NULL, &ind[0], &ind[1])) ||
	    (ret = mk_tensor_new(4, (int64_t[]){in->samples, in->layers, in->heads, in->n},
				 MK_DTYPE_F32, o->d.max_memory, "the indicators", &t)) ||
	    (ret = ad_tmp_name(o->indicators, &tmp)))
		goto cleanup;
	for (int k = 0; k < 2 && ret == MK_OK; k++) {
		for (uint64_t c = 0; c < mk_tensor_count(&t); c++)
			t.data[c] = ind[k][c];
		ret = mk_tensor_write(&t, tmp, names[k], MK_DTYPE_F32);
	}
	ret = ad_finish(ret, tmp, o->indicators);
	tmp = NULL;
	if (ret == MK_OK) {
		cJSON *x = cJSON_AddObjectToObject(j, "indicators");
		cJSON_AddStringToObject(x, "output", o->indicators);
		cJSON_AddNumberToObject(x, "row_share", ad_share(ind[0], in, len));
		cJSON_AddNumberToObject(x, "col_share", ad_share(ind[1], in, len));
	}
cleanup:
	free(tmp);
	free(ind[0]);
	free(ind[1]);
	mk_tensor_release(&t);
	return ret;
}

/* path with its folder resolved (the file need not exist), for comparing
 * names of files not yet written. */
static void ad_canon(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], *real;

	snprintf(dir, sizeof dir, "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1,
		 slash ? path : ".");
	real = realpath(dir, NULL);
	snprintf(buf, size, "%s/%s", real ? real : dir, slash ? slash + 1 : path);
	free(real);
}

/* The outputs replace whole files: never the input's, nor each other. */
static int ad_check_outputs(const ad_opts *o, const char *input)
{
	const char *outs[3] = {o->mean_map, o->indicators, o->png};
	static const char *const opts[3] = {"--mean-map", "--indicators", "--png"};
	size_t flen = mk_tensor_file_len(input);
	char *file = strndup(input, flen);
	int ret = file ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	for (int k = 0; k < 3 && ret == MK_OK; k++) {
		const char *others[4] = {file, NULL, NULL, NULL};
		int n = 1;
		for (int x = 0; x < k; x++)
			if (outs[x])
				others[n++] = outs[x];
		if (outs[k])
			ret = cli_output_not_input(opts[k], outs[k], others, n);
		for (int x = 0; x < k && ret == MK_OK; x++) {
			char ca[8192], cb[8192];
			if (!outs[k] || !outs[x])
				continue;
			ad_canon(outs[k], ca, sizeof ca);
			ad_canon(outs[x], cb, sizeof cb);
			if (!strcmp(ca, cb))
				ret = mk_error_set(MK_EINVAL, "%s '%s' and %s '%s' name the same file",
						   opts[x], outs[x], opts[k], outs[k]);
		}
	}
	free(file);
	return ret;
}

static int ad_exec(void *opts, const cli_args *a)
{
	ad_opts *o = opts;
	const struct mk_cmd *c = &mk_cmd_attn_derive;
	mk_dataset *d = NULL;
	cJSON *j = NULL;
	int ret;

	if (a->argc != 1)
		return cli_usage_error(c, a->argc ? "one FILE.h5 at a time" : "missing FILE.h5");
	if (!o->mean_map && !o->indicators)
		return cli_usage_error(c, "nothing to do: give --mean-map, --indicators or both");
	if ((cli_given(a, "size") || o->png || cli_given(a, "layer")) && !o->mean_map)
		return cli_usage_error(c, "--size, --png and --layer are the mean map's: give "
				       "--mean-map");
	if (!(j = cJSON_CreateObject()))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = ad_check_outputs(o, a->argv[0])) ||
	    (o->mean_map &&
	     (ret = mk_tensor_check_output(o->mean_map, "layer_0", (const char *const *)a->argv, 1))) ||
	    (o->indicators &&
	     (ret = mk_tensor_check_output(o->indicators, "rows", (const char *const *)a->argv, 1))) ||
	    (ret = mk_dataset_open(a->argv[0], &o->d, &d)))
		goto cleanup;
	if (o->png && o->layer >= mk_dataset_get_info(d)->layers) {
		ret = mk_error_set(MK_EINVAL, "--layer %" PRId64 ": the data has %" PRId64
				   " layers (0..%" PRId64 ")", o->layer,
				   mk_dataset_get_info(d)->layers, mk_dataset_get_info(d)->layers - 1);
		goto cleanup;
	}
	if (o->mean_map && (ret = ad_write_mean(d, o, j)))
		goto cleanup;
	if (o->indicators && (ret = ad_write_indicators(d, o, j)))
		goto cleanup;
	if (o->json) {
		ret = cli_json_out(j);
		j = NULL;
	}
cleanup:
	cJSON_Delete(j);
	mk_dataset_close(d);
	return ret;
}

const struct mk_cmd mk_cmd_attn_derive = {
	.name = "attn-derive",
	.summary = "mean attention maps and AAA-style indicators from attention probabilities",
	.synopsis = "FILE.h5 [--mean-map OUT.h5 [--size M] [--png FILE.png [--layer L]]]\n"
		    " [--indicators OUT.h5 [--col-factor F] [--row-entropy R]] [--json]",
	.opts = ad_table,
	.opts_size = sizeof(ad_opts),
	.exec = ad_exec,
	.description =
"Reads attention probabilities [samples, layers, heads, N, N] and each\n"
"sample's length N_i (as attn-stats does: e.g. `maskkit encode` output) and\n"
"writes what other commands take as input:\n"
"  --mean-map   per layer L the dataset layer_L [heads, M, M]: the mean of\n"
"               P over the samples at least M tokens long, on their leading\n"
"               M x M block.  One importance matrix per head for all inputs,\n"
"               as SparseBERT's DAM learns one mask per head: `maskkit prune\n"
"               OUT.h5:/layer_0 --sparsity 0.9 -o mask.h5` prunes it.\n"
"  --indicators 'rows' and 'cols' [samples, layers, heads, N] (0/1, 0 past\n"
"               N_i), the inputs of `maskkit axis`: token k is column-wise\n"
"               important when the attention it receives, averaged over the\n"
"               real queries, is at least F / N_i (F times a uniform share: a\n"
"               key most queries look at, such as [CLS], [SEP] or a full\n"
"               stop); token j is row-wise important when its attention row\n"
"               has entropy at least R ln N_i (a query that looks almost\n"
"               everywhere).  Adaptive Axis Attention learns its indicators;\n"
"               these are read off a trained model's attention instead.\n",
	.notes =
"Each output is written to a temporary file and renamed when complete.\n"
"Sums are in double; results do not depend on the number of threads.\n",
	.examples =
"  maskkit encode MODEL --text t.txt -o attn.h5\n"
"  maskkit attn-derive attn.h5 --mean-map mean.h5 --indicators ind.h5\n"
"  maskkit prune mean.h5:/layer_0 --sparsity 0.9 -o dam.h5\n"
"  maskkit axis ind.h5 --lengths-file attn.h5 --json\n",
};
