/*
 * maskkit attn: the attention engine on the user's own tensors.  Reads Q, K
 * and V ([n, d], [heads, n, d] or [batch, heads, n, d]; float32 or float64;
 * .npy or HDF5), computes O = normalise(Q K^T / sqrt(d) restricted to the
 * mask) V with one of the engine's kernels and writes O in the same layout,
 * and with --weights-out the normalised attention matrix pi itself.
 */
/* realpath() is an X/Open extension, not in the POSIX base we build for. */
#define _XOPEN_SOURCE 700
#include "config.h"
#include <cJSON.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"

#define ATTN_WEIGHTS_MAX_N 4096 /* pi has n^2 entries per head */

typedef struct attn_opts {
	mk_bind_opts bind; /* --seed, --max-memory */
	const char *out, *mask, *weights;
	int backend; /* of attn_backends */
	mk_norm norm;
	mk_attn_kernel kernel;
	bool json;
	int64_t tile;
} attn_opts;

static const char *const attn_backends[] = {"auto", "cpu", "cuda", NULL};

static int attn_opt_norm(void *opts, const char *arg)
{
	return mk_norm_parse(arg, &((attn_opts *)opts)->norm);
}

static int attn_opt_kernel(void *opts, const char *arg)
{
	return mk_attn_kernel_parse(arg, &((attn_opts *)opts)->kernel);
}

/* Declared so that --n is not taken as an abbreviation of --norm. */
static int attn_opt_n(void *opts, const char *arg)
{
	(void)opts;
	(void)arg;
	return cli_usage_error(&mk_cmd_attn, "-n is not an option of attn: n comes from the "
			       "tensors");
}

static const struct cli_opt attn_table[] = {
	CLI_OPT_WRITE_H5("output", 'o', attn_opts, out, "FILE", "O",
		     "O's file: .npy, or .h5 (dataset 'O') or .h5:/dataset; an existing .h5 keeps "
		     "its other datasets"),
	CLI_OPT_READ_AS("mask", 0, CLI_STRING, attn_opts, mask, "EXPR",
		       "the mask, an expression or a mask file of n x kv_len (see 'maskkit gen "
		       "--help'; default: every entry)"),
	CLI_OPT_CALL("norm", 0, attn_opt_norm, "NORM", "softmax",
		     "softmax, dnas, hnas:U or sinkhorn:K (see below)"),
	CLI_OPT_CALL("kernel", 0, attn_opt_kernel, "K", NULL,
		     "dense (no mask; the default without --mask), masked, block (the default "
		     "with --mask) or csr"),
	CLI_OPT_ENUM("backend", 0, attn_opts, backend, "B", attn_backends, NULL, "auto",
		     "auto (cuda when built and a device is usable, else cpu), cpu or cuda"),
	CLI_OPT_WRITE_H5("weights-out", 0, attn_opts, weights, "W", "pi",
		     "also write the attention matrix pi, [.., n, n] (.npy, or .h5 dataset 'pi'); "
		     "n <= 4096"),
	CLI_OPT_INT("tile", 0, attn_opts, tile, "B", 1, MK_N_MAX, "64",
		    "tile size of the mask layout"),
	CLI_OPT_UINT("seed", 0, attn_opts, bind.seed, "SEED", "0", "seed for random terms of the mask"),
	CLI_OPT_SIZE("max-memory", 0, attn_opts, bind.max_memory, "SIZE", "4G",
		     "limit for tensors, mask and layout"),
	CLI_OPT_FLAG("json", 0, attn_opts, json,
		     "summary as JSON: shape, kernel, norm, backend, empty rows, seconds"),
	{.name = "n", .key = 'n', .type = CLI_CALL, .call = attn_opt_n, .flags = CLI_HIDDEN},
	CLI_OPT_END,
};

/* What was read and computed, for the summary. */
typedef struct attn_job {
	mk_tensor qkv[3], o, pi;
	mk_attn_shape shape;
	mk_mask *mask;
	mk_expr *expr;
	mk_attn_layout *layout;
	const mk_attn_backend *backend;
	mk_dtype dtype;
	int64_t empty_rows;
	double seconds;
} attn_job;

static int attn_check_output(const char *opt, const char *path)
{
	if (mk_tensor_format(path) == MK_FMT_NONE)
		return cli_usage_error(&mk_cmd_attn, "%s '%s': write .npy, .h5 or .h5:/dataset", opt,
				       path);
	return MK_OK;
}

/* Where a tensor spec writes: its file with the folder resolved (so that
 * "./o.npy" and "o.npy" are one), and its dataset without repeated or
 * leading slashes (dflt when it names none). */
#define ATTN_WHERE (2 * PATH_MAX + 2)

static void attn_where(const char *spec, const char *dflt, char file[ATTN_WHERE],
		       char dataset[PATH_MAX])
{
	size_t len = mk_tensor_file_len(spec);
	char name[PATH_MAX], dir[PATH_MAX], *slash;
	const char *ds = spec[len] == ':' ? spec + len + 1 : dflt;
	size_t k = 0;

	snprintf(name, sizeof name, "%.*s", (int)len, spec);
	slash = strrchr(name, '/');
	if (slash)
		*slash = '\0';
	if (!realpath(!slash ? "." : name[0] ? name : "/", dir))
		snprintf(dir, sizeof dir, "%s", slash ? name : ".");
	snprintf(file, ATTN_WHERE, "%s/%s", dir, slash ? slash + 1 : name);
	for (const char *c = ds; *c && k + 1 < PATH_MAX; c++)
		if (*c != '/' || (k > 0 && dataset[k - 1] != '/' && c[1] && c[1] != '/'))
			dataset[k++] = *c;
	dataset[k] = '\0';
}

/* True when the two outputs would be written to one place. */
static bool attn_same_output(const char *a, const char *da, const char *b, const char *db)
{
	char fa[ATTN_WHERE], fb[ATTN_WHERE], xa[PATH_MAX], xb[PATH_MAX];
	struct stat sa, sb;
	bool same_file;

	attn_where(a, da, fa, xa);
	attn_where(b, db, fb, xb);
	same_file = !strcmp(fa, fb) || (stat(fa, &sa) == 0 && stat(fb, &sb) == 0 &&
					  sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
	return same_file && (mk_tensor_format(a) != MK_FMT_H5 || !strcmp(xa, xb));
}

static int attn_check(const attn_opts *o, const cli_args *a)
{
	int ret;

	if (a->argc != 3)
		return cli_usage_error(&mk_cmd_attn, "give three tensors Q K V (got %d)", a->argc);
	if (!o->out)
		return cli_usage_error(&mk_cmd_attn, "missing -o OUT");
	if ((ret = attn_check_output("-o", o->out)) ||
	    (o->weights && (ret = attn_check_output("--weights-out", o->weights))))
		return ret;
	if (o->weights && attn_same_output(o->out, "O", o->weights, "pi"))
		return cli_usage_error(&mk_cmd_attn, "-o '%s' and --weights-out '%s' name the same "
				       "%s", o->out, o->weights, mk_tensor_format(o->out) ==
				       MK_FMT_H5 ? "dataset" : "file");
	return MK_OK;
}

/* auto: cuda when built and a device is usable, else cpu. */
static const mk_attn_backend *attn_backend(int which)
{
	const mk_attn_backend *b;

	if (strcmp(attn_backends[which], "auto"))
		return mk_attn_backend_get(attn_backends[which]);
	if ((b = mk_attn_backend_get("cuda")))
		return b;
	mk_error_set(MK_OK, "%s", "");
	return mk_attn_backend_get("cpu");
}

/* ---- inputs ------------------------------------------------------------------ */

static const char *const attn_names[3] = {"Q", "K", "V"};

static int attn_read(char **files, const attn_opts *o, attn_job *j)
{
	char a[96], b[96];
	int ret;

	for (int k = 0; k < 3; k++)
		if ((ret = mk_tensor_read(files[k], o->bind.max_memory, &j->qkv[k])))
			return ret;
	/* K and V alike; Q as they are but for its number of rows */
	for (int k = 1; k < 3; k++) {
		const mk_tensor *x = &j->qkv[k == 1 ? 0 : 1], *y = &j->qkv[k];
		int r = x->rank;
		if (r == y->rank && !memcmp(x->dims, y->dims, (size_t)(r - 2) * sizeof *x->dims) &&
		    x->dims[r - 1] == y->dims[r - 1] && (k == 1 || x->dims[r - 2] == y->dims[r - 2]))
			continue;
		mk_tensor_shape_text(x, a, sizeof a);
		mk_tensor_shape_text(y, b, sizeof b);
		return mk_error_set(MK_EINVAL, "%s '%s' has shape %s but %s '%s' has shape %s; K and "
				    "V need the same shape, and Q theirs but for its rows (q_len)",
				    attn_names[k == 1 ? 0 : 1], files[k == 1 ? 0 : 1], a,
				    attn_names[k], files[k], b);
	}
	j->dtype = MK_DTYPE_F32;
	for (int k = 0; k < 3; k++)
		if (j->qkv[k].dtype == MK_DTYPE_F64)
			j->dtype = MK_DTYPE_F64;
	return MK_OK;
}

static void attn_shape(const mk_tensor *q, const mk_tensor *k, mk_attn_shape *s)
{
	int r = q->rank;
	s->batch = r == 4 ? q->dims[0] : 1;
	s->heads = r >= 3 ? q->dims[r - 3] : 1;
	s->n = q->dims[r - 2];
	s->d = q->dims[r - 1];
	s->kv_len = k->dims[r - 2];
}

static int attn_full_mask(int64_t n, int64_t kv, uint64_t max_memory, mk_mask **m)
{
	int ret = mk_mask_new_rect(n, kv, max_memory, m);
	for (int64_t i = 0; ret == MK_OK && i < n; i++)
		mk_bits_set_range(mk_mask_row(*m, i), 0, kv);
	return ret;
}

static int attn_mask(const attn_opts *o, attn_job *j)
{
	int64_t n = j->shape.n, kv = mk_attn_kv(&j->shape);
	int ret;

	if (o->mask && ((ret = cli_bind_mask(o->mask, &o->bind, n, kv, &j->expr)) ||
			(ret = mk_expr_to_mask(j->expr, &j->mask))))
		return ret;
	if (o->kernel == MK_KERNEL_DENSE) {
		if (j->mask && mk_mask_count(j->mask) != (uint64_t)n * (uint64_t)kv)
			return mk_error_set(MK_EINVAL, "kernel 'dense' attends to every key and "
					    "ignores a mask: use --kernel masked, block or csr");
		return MK_OK;
	}
	if (!j->mask && (ret = attn_full_mask(n, kv, o->bind.max_memory, &j->mask)))
		return ret;
	ret = mk_attn_prepare(j->backend, j->mask, o->tile, o->bind.max_memory, &j->layout);
	if (ret)
		return ret;
	j->empty_rows = mk_attn_layout_empty_rows(j->layout);
	return MK_OK;
}

/* ---- computing ------------------------------------------------------------- */

static int attn_run(const attn_opts *o, attn_job *j, const float *v, float *out)
{
	mk_attn_stats st;
	return mk_attn_run(j->backend, o->kernel, &o->norm, &j->shape, j->qkv[0].data,
			   j->qkv[1].data, v, j->layout, out, &st);
}

/* pi column block by column block: pi V is linear in V, so V = columns
 * [c0, c0 + d) of the identity gives those columns of pi in O. */
static int attn_weights(const attn_opts *o, attn_job *j)
{
	const mk_attn_shape *s = &j->shape;
	int64_t dims[MK_TENSOR_MAX_RANK], slices = s->batch * s->heads, n = s->n, d = s->d;
	int64_t kv = mk_attn_kv(s);
	mk_tensor v = {0}, out = {0};
	int r = j->qkv[0].rank, ret;

	memcpy(dims, j->qkv[0].dims, sizeof dims);
	dims[r - 1] = kv;
	if ((ret = mk_tensor_new(r, dims, j->dtype, o->bind.max_memory, "the attention "
				 "matrix (--weights-out)", &j->pi)) ||
	    (ret = mk_tensor_new(r, j->qkv[1].dims, MK_DTYPE_F32, o->bind.max_memory, "V",
				 &v)) ||
	    (ret = mk_tensor_new(r, j->qkv[0].dims, MK_DTYPE_F32, o->bind.max_memory, "O",
				 &out)))
		goto out;
	for (int64_t c0 = 0; c0 < kv; c0 += d) {
		int64_t w = kv - c0 < d ? kv - c0 : d;
		memset(v.data, 0, (size_t)mk_tensor_count(&v) * sizeof *v.data);
		for (int64_t x = 0; x < slices; x++)
			for (int64_t c = 0; c < w; c++)
				v.data[(x * kv + c0 + c) * d + c] = 1.0f;
		if ((ret = attn_run(o, j, v.data, out.data)))
			goto out;
		for (int64_t x = 0; x < slices * n; x++)
			memcpy(j->pi.data + x * kv + c0, out.data + x * d, (size_t)w * sizeof(float));
	}
out:
	mk_tensor_release(&v);
	mk_tensor_release(&out);
	return ret;
}

static int attn_compute(char **files, const attn_opts *o, attn_job *j)
{
	int ret;
	double t0;

	if (!(j->backend = attn_backend(o->backend)))
		return MK_EINVAL;
	if ((ret = attn_read(files, o, j)))
		return ret;
	attn_shape(&j->qkv[0], &j->qkv[1], &j->shape);
	if (o->weights && (j->shape.n > ATTN_WEIGHTS_MAX_N ||
			   mk_attn_kv(&j->shape) > ATTN_WEIGHTS_MAX_N))
		return mk_error_set(MK_ERANGE, "--weights-out needs n and kv_len <= %d (pi has "
				    "n kv_len entries per head), got %" PRId64 " and %" PRId64,
				    ATTN_WEIGHTS_MAX_N, j->shape.n, mk_attn_kv(&j->shape));
	if ((ret = attn_mask(o, j)) ||
	    (ret = mk_tensor_new(j->qkv[0].rank, j->qkv[0].dims, j->dtype, o->bind.max_memory,
				 "O", &j->o)))
		return ret;
	t0 = mk_attn_clock(j->backend);
	if ((ret = attn_run(o, j, j->qkv[2].data, j->o.data)))
		return ret;
	j->seconds = mk_attn_clock(j->backend) - t0;
	if (o->weights && (ret = attn_weights(o, j)))
		return ret;
	if ((ret = mk_tensor_write(&j->o, o->out, "O", j->dtype)))
		return ret;
	return o->weights ? mk_tensor_write(&j->pi, o->weights, "pi", j->dtype) : MK_OK;
}

/* ---- reporting ------------------------------------------------------------- */

static void attn_print(const attn_opts *o, const attn_job *j)
{
	char shape[96], norm[32];
	mk_tensor_shape_text(&j->o, shape, sizeof shape);
	mk_norm_format(&o->norm, norm, sizeof norm);
	printf("O %s %s -> %s\n", shape, mk_dtype_name(j->dtype), o->out);
	printf("kernel %s, norm %s, backend %s, mask %s\n", mk_attn_kernel_name(o->kernel), norm,
	       mk_attn_backend_name(j->backend), j->expr ? mk_expr_params(j->expr) : "full");
	printf("empty rows %" PRId64 ", %.6f s\n", j->empty_rows, j->seconds);
	if (o->weights) {
		mk_tensor_shape_text(&j->pi, shape, sizeof shape);
		printf("pi %s -> %s\n", shape, o->weights);
	}
}

static void attn_json(const attn_opts *o, const attn_job *j)
{
	cJSON *x = cJSON_CreateObject(), *shape = cJSON_AddArrayToObject(x, "shape");
	char norm[32], *s;

	mk_norm_format(&o->norm, norm, sizeof norm);
	for (int k = 0; k < j->o.rank; k++)
		cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)j->o.dims[k]));
	cJSON_AddNumberToObject(x, "batch", (double)j->shape.batch);
	cJSON_AddNumberToObject(x, "heads", (double)j->shape.heads);
	cJSON_AddNumberToObject(x, "n", (double)j->shape.n);
	cJSON_AddNumberToObject(x, "kv_len", (double)mk_attn_kv(&j->shape));
	cJSON_AddNumberToObject(x, "d", (double)j->shape.d);
	cJSON_AddStringToObject(x, "dtype", mk_dtype_name(j->dtype));
	cJSON_AddStringToObject(x, "kernel", mk_attn_kernel_name(o->kernel));
	cJSON_AddStringToObject(x, "norm", norm);
	cJSON_AddStringToObject(x, "backend", mk_attn_backend_name(j->backend));
	cJSON_AddStringToObject(x, "mask", j->expr ? mk_expr_params(j->expr) : "full");
	cJSON_AddNumberToObject(x, "empty_rows", (double)j->empty_rows);
	cJSON_AddNumberToObject(x, "seconds", j->seconds);
	cJSON_AddStringToObject(x, "output", o->out);
	if (o->weights)
		cJSON_AddStringToObject(x, "weights", o->weights);
	else
		cJSON_AddNullToObject(x, "weights");
	if ((s = cJSON_Print(x)))
		puts(s);
	free(s);
	cJSON_Delete(x);
}

static void attn_job_release(attn_job *j)
{
	for (int k = 0; k < 3; k++)
		mk_tensor_release(&j->qkv[k]);
	mk_tensor_release(&j->o);
	mk_tensor_release(&j->pi);
	mk_attn_layout_free(j->layout);
	mk_mask_free(j->mask);
	mk_expr_free(j->expr);
}

static int attn_exec(void *opts, const cli_args *a)
{
	attn_opts *o = opts;
	attn_job j = {0};
	int ret;

	if ((ret = attn_check(o, a)))
		return ret;
	if (!cli_given(a, "kernel"))
		o->kernel = o->mask ? MK_KERNEL_BLOCK : MK_KERNEL_DENSE;
	if (!(ret = attn_compute(a->argv, o, &j))) {
		if (o->json)
			attn_json(o, &j);
		else
			attn_print(o, &j);
	}
	attn_job_release(&j);
	return ret;
}

const struct mk_cmd mk_cmd_attn = {
	.name = "attn",
	.summary = "run the attention engine on your own Q, K, V tensors",
	.synopsis = "Q K V -o OUT [--mask EXPR] [--norm NORM] [--kernel KERNEL]\n"
		     " [--backend auto|cpu|cuda] [--weights-out W] [--tile B] [--json]",
	.opts = attn_table,
	.opts_size = sizeof(attn_opts),
	.exec = attn_exec,
	.description =
"Computes O = normalise(S restricted to the mask) V with S = Q K^T / sqrt(d)\n"
"for each (batch, head) and writes O in Q's layout.  Q, K and V have one\n"
"shape: [n, d], [heads, n, d] or [batch, heads, n, d] (K and V may have\n"
"another number of rows, kv_len: then the mask is n x kv_len and query i\n"
"sits at key position i + kv_len - n, as with a KV cache; cpu backend); each\n"
"is a .npy file,\n"
"an HDF5 file with one dataset of rank 2 to 4, or FILE.h5:/dataset.  float32\n"
"and float64 are read (the engine computes in float32); O is float64 when an\n"
"input is, else float32.  NaN or Inf in an input is an error, as are inputs\n"
"whose scores could pass 1e37 (max |q_i| max |k_j| / sqrt(d) per head), beyond\n"
"which float32 cannot hold the normalisations.\n",
	.notes =
"Normalisations: softmax (rows sum to 1), dnas (columns normalised first, then\n"
"rows: Ding et al.), hnas:U (U dnas + (1 - U) softmax), sinkhorn:K (K rounds).\n"
"The summary names the backend that ran (with --backend auto: cuda or cpu).\n"
"\n"
"A row of the mask with no entry gives a zero row of O (and of pi); their\n"
"number is reported.  Outputs are written to a temporary file and renamed,\n"
"so a failure leaves an existing file intact.  An output that would\n"
"overwrite an input (the same .npy file, or the same dataset) is refused.\n",
	.examples =
"  maskkit attn q.npy k.npy v.npy -o o.npy\n"
"  maskkit attn q1.npy kcache.npy vcache.npy --mask causal -o o.npy   # decoding\n"
"  maskkit attn qkv.h5:/q qkv.h5:/k qkv.h5:/v --mask local8 --norm dnas -o qkv.h5:/o\n"
"  maskkit attn q.npy k.npy v.npy --mask 'local4 + global1' --weights-out pi.npy -o o.npy --json\n",
};
