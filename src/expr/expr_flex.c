/*
 * FlexAttention from a bound expression: its mask_mod as a standalone Python
 * source file (index arithmetic on q_idx and kv_idx, composed with | & ~, so
 * it holds at any length without an n x n tensor and torch.compile can fuse
 * it), and its BlockMask arrays in memory.  Each pattern writes its own
 * term (the flex() of each family in patterns/, helpers in patterns/flex.c);
 * this file maps the mask's rows and columns onto the patterns' grid as the
 * cursor does
 * (expr_eval.c: a rectangular mask is a corner of the grid, a term with
 * block=B sits on the grid of blocks) and writes the file around them.
 */
#include "config.h"
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "expr_internal.h"
#include "io.h"

#define FLEX_MAX_BLOCKS 16 /* distinct block= sizes in one expression */

struct flex_gen {
	const mk_expr *e;
	mk_flex f;
	mk_sb expr; /* f's text */
	int64_t blocks[FLEX_MAX_BLOCKS]; /* the block sizes the terms use */
	size_t nblocks;
	char i[32], j[32], ic[32], jc[32];
};

/* Names the term's grid indices (i, j for tokens; i_B, j_B for blocks of B). */
static int flex_names(struct flex_gen *g, int64_t block)
{
	size_t k;

	for (k = 0; k < g->nblocks && g->blocks[k] != block; k++)
		;
	if (k == g->nblocks) {
		if (k == FLEX_MAX_BLOCKS)
			return mk_error_set(MK_EINVAL, "a mask_mod takes at most %d different block "
					    "sizes", FLEX_MAX_BLOCKS);
		g->blocks[g->nblocks++] = block;
	}
	if (block == 1) {
		snprintf(g->i, sizeof g->i, "i");
		snprintf(g->j, sizeof g->j, "j");
		snprintf(g->ic, sizeof g->ic, "ic");
		snprintf(g->jc, sizeof g->jc, "jc");
	} else {
		snprintf(g->i, sizeof g->i, "i_%" PRId64, block);
		snprintf(g->j, sizeof g->j, "j_%" PRId64, block);
		snprintf(g->ic, sizeof g->ic, "ic_%" PRId64, block);
		snprintf(g->jc, sizeof g->jc, "jc_%" PRId64, block);
	}
	g->f.i = g->i;
	g->f.j = g->j;
	g->f.ic = g->ic;
	g->f.jc = g->jc;
	return MK_OK;
}

static int flex_node(struct flex_gen *g, const mk_node *x)
{
	static const char *const ops[] = {[MK_OP_OR] = " | ", [MK_OP_AND] = " & ",
					  [MK_OP_ANDNOT] = " & ~"};
	int ret;

	switch (x->kind) {
	case MK_NODE_FILE:
		return mk_error_set(MK_EINVAL, "'%s' is a mask file: a mask_mod is generated from "
				    "patterns, and a file's cells would need an n x n lookup "
				    "(docs/formats.md has that route)", x->path);
	case MK_NODE_PATTERN:
		if (!x->term.def->flex)
			return mk_error_set(MK_EINVAL, "pattern '%s' has no mask_mod",
					    x->term.def->info.name);
		if ((ret = flex_names(g, x->term.block)))
			return ret;
		return x->term.def->flex(&x->term, &g->f);
	default:
		break;
	}
	mk_flex_printf(&g->f, "(%s", x->op == MK_OP_NOT ? "~" : "");
	if ((ret = flex_node(g, x->a)))
		return ret;
	if (x->op != MK_OP_NOT) {
		assert(x->op >= MK_OP_OR && x->op <= MK_OP_ANDNOT);
		mk_flex_printf(&g->f, "%s", ops[x->op]);
		if ((ret = flex_node(g, x->b)))
			return ret;
	}
	mk_flex_printf(&g->f, ")");
	return g->f.err;
}

/* ---- the file ---------------------------------------------------------------- */

/* A Python string literal (repr-like, single-quoted) of s. */
static void flex_quote(mk_sb *b, const char *s)
{
	mk_sb_printf(b, "'");
	for (; *s; s++) {
		if (*s == '\\' || *s == '\'')
			mk_sb_printf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			mk_sb_printf(b, "\\x%02x", (unsigned char)*s);
		else
			mk_sb_printf(b, "%c", *s);
	}
	mk_sb_printf(b, "'");
}

/* The table's int32 values, little-endian, in base64 (RFC 4648), in lines
 * of 76 characters inside a parenthesised run of string literals. */
static void flex_base64(mk_sb *b, const mk_flex_table *t)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t nbytes = (size_t)(t->rows * t->cols) * 4, col = 0;
	char quad[5] = {0};

	mk_sb_printf(b, "(\n        '");
	for (size_t p = 0; p < nbytes; p += 3) {
		uint32_t v = 0;
		size_t have = nbytes - p < 3 ? nbytes - p : 3;
		for (size_t q = 0; q < 3; q++) {
			size_t at = p + q;
			uint8_t byte = 0;
			if (q < have)
				byte = (uint8_t)((uint32_t)t->data[at / 4] >> (8 * (at % 4)));
			v = v << 8 | byte;
		}
		for (int q = 0; q < 4; q++)
			quad[q] = (size_t)q <= have ? abc[(v >> (18 - 6 * q)) & 63] : '=';
		if (col == 76) {
			mk_sb_printf(b, "'\n        '");
			col = 0;
		}
		mk_sb_printf(b, "%s", quad);
		col += 4;
	}
	mk_sb_printf(b, "')");
}

static const char *const flex_kinds[] = {[MK_FLEX_ROWS] = "rows", [MK_FLEX_SET] = "set",
					 [MK_FLEX_SEGMENTS] = "segments"};

static void flex_head(mk_sb *b, const mk_expr *e)
{
	int64_t n = mk_expr_n(e), kv = mk_expr_kv_len(e);

	mk_sb_printf(b, "# A FlexAttention mask_mod, written by maskkit %s (maskkit gen --format "
		     "flex-py).\n", mk_version());
	mk_sb_printf(b,
		     "# It needs only torch (2.5 or later): index arithmetic on q_idx and kv_idx,\n"
		     "# with small lookup tables for what arithmetic cannot say (random keys,\n"
		     "# chosen tokens, documents), never an n x n tensor.\n#\n"
		     "#   import torch\n"
		     "#   from torch.nn.attention.flex_attention import flex_attention\n"
		     "#   import mask_mod as mm                  # this file\n"
		     "#   bm = mm.block_mask(128, device=\"cuda\")  # create_block_mask over mm.mask_mod\n"
		     "#   out = torch.compile(flex_attention)(q, k, v, block_mask=bm)\n"
		     "#\n# q_idx is the query's row (0 .. Q_LEN-1) and kv_idx the key's column.\n"
		     "import array\nimport base64\nimport sys\n\nimport torch\n\n");
	mk_sb_printf(b, "EXPR = ");
	flex_quote(b, mk_expr_text(e));
	mk_sb_printf(b, "\nPARAMS = ");
	flex_quote(b, mk_expr_params(e));
	mk_sb_printf(b, "\nQ_LEN = %" PRId64 "\nKV_LEN = %" PRId64 "\nALIGN = '%s'\n", n, kv,
		     mk_align_name(mk_expr_align(e)));
}

static void flex_tables(mk_sb *b, const mk_flex *f)
{
	mk_sb_printf(b, "\n# t<K>: (kind, n, rows, cols, int32 little-endian in base64)\n"
		     "_TABLES = [");
	for (size_t k = 0; k < f->ntables; k++) {
		const mk_flex_table *t = &f->tables[k];
		mk_sb_printf(b, "\n    ('%s', %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
			     flex_kinds[t->kind], t->n, t->rows, t->cols);
		flex_base64(b, t);
		mk_sb_printf(b, "),");
	}
	mk_sb_printf(b, "%s]\n\n\n", f->ntables ? "\n" : "");
	mk_sb_printf(b,
		     "def _table(k, device):\n"
		     "    kind, n, rows, cols, data = _TABLES[k]\n"
		     "    a = array.array('i')\n"
		     "    a.frombytes(base64.b64decode(data))\n"
		     "    if sys.byteorder == 'big':\n"
		     "        a.byteswap()\n"
		     "    t = torch.frombuffer(a, dtype=torch.int32).clone().reshape(rows, cols)\n"
		     "    if kind == 'set':  # positions -> membership\n"
		     "        m = torch.zeros(n, dtype=torch.bool)\n"
		     "        m[t[:, 0].long()] = True\n"
		     "        t = m\n"
		     "    elif kind == 'segments':  # lengths -> segment ids, -1 past their sum\n"
		     "        ids = torch.repeat_interleave(torch.arange(rows, dtype=torch.int32), "
		     "t[:, 0].long())\n"
		     "        t = torch.full((n,), -1, dtype=torch.int32)\n"
		     "        t[:ids.numel()] = ids\n"
		     "    elif kind == 'rows':  # its columns, each a vector: tK[c][i]\n"
		     "        return tuple(c.contiguous() if device is None else c.to(device)\n"
		     "                     for c in t.unbind(1))\n"
		     "    return t.to(device) if device is not None else t\n\n\n");
}

static void flex_body(mk_sb *b, const struct flex_gen *g)
{
	const mk_expr *e = g->e;
	int64_t oq = 0, okv = 0;

	if (e->align == MK_ALIGN_BOTTOM_RIGHT) { /* expr_eval.c's corner of the grid */
		oq = e->grid - e->n;
		okv = e->grid - e->kv;
	}
	mk_sb_printf(b, "def make_mask_mod(device=None):\n"
		     "    \"\"\"The mask_mod, its tables on device (None: the CPU).\"\"\"\n");
	for (size_t k = 0; k < g->f.ntables; k++)
		mk_sb_printf(b, "    t%zu = _table(%zu, device)\n", k, k);
	mk_sb_printf(b, "\n    def mask_mod(b, h, q_idx, kv_idx):\n");
	mk_sb_printf(b, "        # positions on the patterns' grid of %" PRId64 "%s\n", e->grid,
		     oq || okv ? " (the mask is its bottom-right corner)" : "");
	mk_sb_printf(b, "        i = q_idx%s", oq ? " + " : "");
	if (oq)
		mk_sb_printf(b, "%" PRId64, oq);
	mk_sb_printf(b, "\n        j = kv_idx%s", okv ? " + " : "");
	if (okv)
		mk_sb_printf(b, "%" PRId64, okv);
	mk_sb_printf(b, "\n");
	for (size_t k = 0; k < g->nblocks; k++) {
		int64_t B = g->blocks[k], nt = (e->grid + B - 1) / B;
		if (B > 1)
			mk_sb_printf(b, "        i_%" PRId64 " = i // %" PRId64 "\n        j_%" PRId64
				     " = j // %" PRId64 "\n", B, B, B, B);
		/* clamped for table lookups: a kernel may ask past the end */
		if (g->f.ntables) {
			const char *s = B > 1 ? "_" : "";
			char num[24] = "";
			if (B > 1)
				snprintf(num, sizeof num, "%" PRId64, B);
			mk_sb_printf(b, "        ic%s%s = i%s%s.clamp(0, %" PRId64 ")\n", s, num, s,
				     num, nt - 1);
			mk_sb_printf(b, "        jc%s%s = j%s%s.clamp(0, %" PRId64 ")\n", s, num, s,
				     num, nt - 1);
		}
	}
	mk_sb_printf(b, "        return %s\n\n    return mask_mod\n\n\n", g->expr.s);
	mk_sb_printf(b,
		     "mask_mod = make_mask_mod()\n\n\n"
		     "def block_mask(block_size=128, device=None):\n"
		     "    \"\"\"create_block_mask over this mask_mod (B = H = 1).\"\"\"\n"
		     "    from torch.nn.attention.flex_attention import create_block_mask\n"
		     "    return create_block_mask(make_mask_mod(device), None, None, Q_LEN, KV_LEN,\n"
		     "                             device=device if device is not None else 'cpu',\n"
		     "                             BLOCK_SIZE=block_size)\n");
}

int mk_expr_flex_py(const mk_expr *e, char **out)
{
	struct flex_gen g = {.e = e};
	mk_sb b = {0};
	int ret;

	assert(e && out);
	*out = NULL;
	if (!e->bound)
		return mk_error_set(MK_EINVAL, "a mask_mod needs a bound expression");
	g.f.text = &g.expr;
	g.f.max_memory = e->max_memory;
	ret = flex_node(&g, e->root);
	if (ret == MK_OK && g.f.err)
		ret = g.f.err;
	if (ret == MK_OK) {
		flex_head(&b, e);
		flex_tables(&b, &g.f);
		flex_body(&b, &g);
		if (!(*out = mk_sb_take(&b)))
			ret = mk_error_set(MK_ENOMEM, "out of memory for a mask_mod");
	}
	mk_flex_release(&g.f);
	free(mk_sb_take(&g.expr));
	return ret;
}

/* ---- the block layout in memory ---------------------------------------------- */

static void flex_blocks_row(void *ctx, int64_t i, uint64_t *dst)
{
	mk_cursor_row(ctx, i, dst);
}

int mk_expr_flex_blocks(const mk_expr *e, int64_t block, mk_flex_blocks **out)
{
	mk_cursor *cur = NULL;
	mk_rows rows;
	int ret;

	assert(e && out);
	*out = NULL;
	if (!e->bound)
		return mk_error_set(MK_EINVAL, "a block layout needs a bound expression");
	if ((ret = mk_cursor_new(e, &cur)))
		return ret;
	rows = (mk_rows){.n = e->n, .cols = e->kv, .row = flex_blocks_row, .ctx = cur};
	ret = mk_io_flex_blocks(&rows, block, e->max_memory, out);
	mk_cursor_free(cur);
	return ret;
}
