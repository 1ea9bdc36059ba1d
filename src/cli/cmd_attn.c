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
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"



typedef struct attn_opts {
	mk_attn_files_opts f; /* the library's: --mask, --norm, --kernel, -o ... */
	int backend;          /* of attn_backends */
	bool json;
} attn_opts;

static const char *const attn_backends[] = {"auto", "cpu", "cuda", NULL};

static int attn_opt_norm(void *opts, const char *arg)
{
	return mk_norm_parse(arg, &((attn_opts *)opts)->f.norm);
}

static int attn_opt_kernel(void *opts, const char *arg)
{
	return mk_attn_kernel_parse(arg, &((attn_opts *)opts)->f.kernel);
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
	CLI_OPT_WRITE_H5("output", 'o', attn_opts, f.out, "FILE", "O",
		     "O's file: .npy, or .h5 (dataset 'O') or .h5:/dataset; an existing .h5 keeps "
		     "its other datasets"),
	CLI_OPT_READ_AS("mask", 0, CLI_STRING, attn_opts, f.mask, "EXPR",
		       "the mask, an expression or a mask file of n x kv_len (see 'maskkit gen "
		       "--help'; default: every entry)"),
	CLI_OPT_ALIGN(offsetof(attn_opts, f.bind.align)),
	CLI_OPT_CALL("norm", 0, attn_opt_norm, "NORM", "softmax",
		     "softmax, dnas, hnas:U or sinkhorn:K (see below)"),
	CLI_OPT_CALL("kernel", 0, attn_opt_kernel, "K", NULL,
		     "dense (no mask; the default without --mask), masked, block (the default "
		     "with --mask) or csr"),
	CLI_OPT_ENUM("backend", 0, attn_opts, backend, "B", attn_backends, NULL, "auto",
		     "auto (cuda when built and a device is usable, else cpu), cpu or cuda"),
	{.name = "weights-out", .type = CLI_FILE, .off = offsetof(attn_opts, f.weights),
	 .meta = "W", .flags = CLI_OUTPUT, .dataset = "pi", .param = "weights",
	 .help = "also write the attention matrix pi, [.., n, n] (.npy, or .h5 dataset 'pi'); "
		 "n <= 4096"},
	CLI_OPT_INT("tile", 0, attn_opts, f.tile, "B", 1, MK_N_MAX, "64",
		    "tile size of the mask layout"),
	CLI_OPT_UINT("seed", 0, attn_opts, f.bind.seed, "SEED", "0", "seed for random terms of the mask"),
	CLI_OPT_SIZE("max-memory", 0, attn_opts, f.bind.max_memory, "SIZE", "4G",
		     "limit for tensors, mask and layout"),
	CLI_OPT_FLAG("json", 0, attn_opts, json,
		     "summary as JSON: shape, kernel, norm, backend, empty rows, seconds"),
	{.name = "n", .key = 'n', .type = CLI_CALL, .call = attn_opt_n, .flags = CLI_HIDDEN},
	CLI_OPT_END,
};

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
	const mk_attn_files_opts *f = &o->f;

	if (!f->out)
		return cli_usage_error(&mk_cmd_attn, "missing -o OUT");
	if ((ret = attn_check_output("-o", f->out)) ||
	    (f->weights && (ret = attn_check_output("--weights-out", f->weights))))
		return ret;
	if (f->weights && attn_same_output(f->out, "O", f->weights, "pi"))
		return cli_usage_error(&mk_cmd_attn, "-o '%s' and --weights-out '%s' name the same "
				       "%s", f->out, f->weights, mk_tensor_format(f->out) ==
				       MK_FMT_H5 ? "dataset" : "file");
	return MK_OK;
}

static int attn_exec(void *opts, const cli_args *a)
{
	attn_opts *o = opts;
	mk_attn_files r;
	int ret;

	if ((ret = attn_check(o, a)))
		return ret;
	if (!cli_given(a, "kernel"))
		o->f.kernel = o->f.mask ? MK_KERNEL_BLOCK : MK_KERNEL_DENSE;
	o->f.backend = attn_backends[o->backend];
	/* main.c names a mapped input truncated under us (SIGBUS) */
	o->f.map_inputs = true;
	if ((ret = mk_attn_files_run((const char *const *)a->argv, &o->f, &r)))
		return ret;
	ret = mk_emit(stdout, o->json ? MK_EMIT_JSON : MK_EMIT_TEXT, &mk_attn_files_record, &r, 1,
		      MK_EMIT_NO_NOTE);
	mk_attn_files_release(&r);
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
"sits at key position i + kv_len - n, as with a KV cache, or at key i with\n"
"--align top-left; cpu backend); each is a .npy file,\n"
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
"overwrite an input (the same .npy file, or the same dataset) is refused.\n"
"float32 .npy inputs over 4 MiB are mapped, not copied: one that another\n"
"program truncates while attn runs ends it (exit 2, nothing written).\n",
	.examples =
"  maskkit attn q.npy k.npy v.npy -o o.npy\n"
"  maskkit attn q1.npy kcache.npy vcache.npy --mask causal -o o.npy   # decoding\n"
"  maskkit attn qkv.h5:/q qkv.h5:/k qkv.h5:/v --mask local8 --norm dnas -o qkv.h5:/o\n"
"  maskkit attn q.npy k.npy v.npy --mask 'local4 + global1' --weights-out pi.npy -o o.npy --json\n",
};
