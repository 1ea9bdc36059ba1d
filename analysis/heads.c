/*
 * Per-head masks measured: |M| and the sparsity of each head's mask, their
 * total and mean, as gen and compose --heads-file report them.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "measure.h"
#include "io.h"
#include "result.h"

int mk_heads_measure(const mk_heads *h, const char *output, mk_heads_summary *out)
{
	mk_measure m;
	int ret;

	*out = (mk_heads_summary){.heads_file = h->path, .layers = h->layers, .heads = h->heads,
				  .n = mk_expr_n(h->e[0]), .output = output};
	if (!(out->masks = calloc((size_t)h->count, sizeof *out->masks)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t k = 0; k < h->count; k++) {
		mk_head_mask *x = &out->masks[k];
		if ((ret = mk_measure_expr(h->e[k], NULL, 0, NULL, NULL, &m))) {
			mk_heads_summary_release(out);
			if (h->layers)
				return mk_error_prefix("'%s': layer %" PRId64 ", head %" PRId64 ": ",
						       h->path, k / h->heads, k % h->heads);
			return mk_error_prefix("'%s': head %" PRId64 ": ", h->path, k);
		}
		*x = (mk_head_mask){.layer = h->layers ? k / h->heads : -1,
				    .head = h->layers ? k % h->heads : k,
				    .expr = mk_expr_text(h->e[k]), .params = mk_expr_params(h->e[k]),
				    .seed = h->seed + (uint64_t)k, .count = m.count,
				    .sparsity = m.sparsity};
		out->count += m.count;
		out->sparsity += m.sparsity;
	}
	out->nmasks = h->count;
	out->sparsity /= (double)h->count;
	return MK_OK;
}

void mk_heads_summary_release(mk_heads_summary *s)
{
	if (!s)
		return;
	free(s->masks);
	memset(s, 0, sizeof *s);
}

/* ---- the result, described once ------------------------------------------- */

static bool heads_has_layer(const void *rec)
{
	return ((const mk_head_mask *)rec)->layer >= 0;
}

static const mk_field heads_mask_fields[] = {
	{MK_FIELD(mk_head_mask, layer, "layer", MK_FT_I64), .flags = MK_FF_OMIT,
	 .present = heads_has_layer, .help = "absent for a flat list of heads"},
	{MK_FIELD(mk_head_mask, head, "head", MK_FT_I64)},
	{MK_FIELD(mk_head_mask, expr, "expr", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "the expression, canonical"},
	{MK_FIELD(mk_head_mask, params, "params", MK_FT_STR), .label = "mask",
	 .help = "the expression with every parameter"},
	{MK_FIELD(mk_head_mask, seed, "seed", MK_FT_U64), .flags = MK_FF_NOTEXT | MK_FF_EXACT,
	 .help = "the seed it was bound with"},
	{MK_FIELD(mk_head_mask, count, "count", MK_FT_U64), .label = "|M|"},
	{MK_FIELD(mk_head_mask, sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f"},
};
static const mk_record heads_mask_record = MK_RECORD("head_mask", mk_head_mask, heads_mask_fields);

static const mk_field heads_fields[] = {
	{MK_FIELD(mk_heads_summary, heads_file, "heads_file", MK_FT_STR), .label = "heads file"},
	{MK_FIELD(mk_heads_summary, layers, "layers", MK_FT_I64),
	 .help = "0 for a flat list of heads"},
	{MK_FIELD(mk_heads_summary, heads, "heads", MK_FT_I64)},
	{MK_FIELD(mk_heads_summary, n, "n", MK_FT_I64)},
	{MK_FIELD(mk_heads_summary, count, "count", MK_FT_U64), .label = "|M|",
	 .help = "summed over the heads"},
	{MK_FIELD(mk_heads_summary, sparsity, "sparsity", MK_FT_REAL), .label = "mean sparsity",
	 .fmt = "%.6f"},
	{MK_FIELD(mk_heads_summary, output, "output", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "the file written, or null"},
	{MK_FIELD(mk_heads_summary, masks, "masks", MK_FT_LIST), .sub = &heads_mask_record,
	 .count_offset = offsetof(mk_heads_summary, nmasks)},
};

const mk_record mk_heads_summary_record =
	MK_RECORD("heads", mk_heads_summary, heads_fields);
