/*
 * gen and compose --heads-file: the library reads the file and builds one
 * mask per (layer, head) (mk_heads_open), writes them as one stack
 * (mk_heads_write) and measures them (mk_heads_measure); this file checks
 * the output options and prints.
 */
#include "config.h"
#include "cli.h"

int cli_heads_file(const char *path, char ***exprs, int64_t *layers, int64_t *heads)
{
	return mk_heads_file_read(path, exprs, layers, heads);
}

void cli_heads_free(char **exprs, size_t count)
{
	mk_heads_file_free(exprs, count);
}

/* A stack is one HDF5 dataset, or one FlexAttention layout with a head per
 * mask; no other format holds one. */
static int heads_check_output(const cli_mask_opts *o)
{
	mk_format f = o->format;

	if (o->out && f == MK_FMT_NONE)
		f = mk_format_from_path(o->out);
	if (o->out && f != MK_FMT_H5 && f != MK_FMT_FLEX)
		return mk_error_set(MK_EINVAL, "'%s': --heads-file writes all the masks as one HDF5 "
				    "dataset: give a .h5 file (or a .npz, --format flex, for their "
				    "block layouts)", o->out);
	if (!o->out && f != MK_FMT_NONE)
		return mk_error_set(MK_EINVAL, "--heads-file without -o prints a summary: give "
				    "-o FILE.h5 to write the masks");
	return MK_OK;
}

/* Without -o: |M| and sparsity per head, as text or (--json) JSON; with -o
 * and --json: the same JSON, with the output named. */
int cli_heads_emit(const char *path, int op, char **args, int nargs, const cli_mask_opts *o)
{
	mk_write_opts w = {.format = o->format, .block = o->block,
			   .max_memory = o->bind.max_memory};
	mk_heads_summary s = {0};
	mk_heads *h = NULL;
	int ret;

	if ((ret = heads_check_output(o)) ||
	    (ret = mk_heads_open(path, op, (const char *const *)args, nargs, &o->bind, &h)) ||
	    (o->out && (ret = mk_heads_write(h, o->out, &w))))
		goto out;
	if (o->out && !o->json)
		goto out;
	if ((ret = mk_heads_measure(h, o->out, &s)) ||
	    (ret = mk_emit(stdout, o->json ? MK_EMIT_JSON : MK_EMIT_TEXT, &mk_heads_summary_record,
			   &s, 1, MK_EMIT_NO_NOTE)))
		goto out;
	if (!o->json)
		printf("(not written: give -o FILE.h5 for one dataset of all the masks)\n");
out:
	mk_heads_summary_release(&s);
	mk_heads_free(h);
	return ret;
}
