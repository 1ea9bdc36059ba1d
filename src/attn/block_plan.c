/* The block kernel's work plan (block_plan.h): one item per sub-block and
 * piece, in row order, the split sub-blocks listed with their slots. */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "block_plan.h"

int64_t mk_block_plan_piece(const int64_t *ptr, int64_t nt)
{
	int64_t total = nt > 0 ? ptr[nt] - ptr[0] : 0, mean = nt > 0 ? (total + nt - 1) / nt : 0;
	return 2 * mean > MK_BLOCK_MIN_PIECE ? 2 * mean : MK_BLOCK_MIN_PIECE;
}

void mk_block_plan_rows(int64_t n, int64_t tile, int64_t bm, int64_t r, int64_t sub,
			int64_t *lo, int64_t *hi)
{
	int64_t end = r * tile + tile < n ? r * tile + tile : n;
	*lo = r * tile + sub * bm;
	*hi = *lo + bm < end ? *lo + bm : end;
}

static int64_t plan_subs(int64_t n, int64_t tile, int64_t bm, int64_t r)
{
	int64_t rows = r * tile + tile < n ? tile : n - r * tile;
	return (rows + bm - 1) / bm;
}

/* Counts (items NULL) or fills the items and splits. */
static void plan_fill(mk_block_plan *p, const int64_t *ptr, int64_t n, int64_t tile, int64_t bm,
		      int64_t piece)
{
	int64_t nt = (n + tile - 1) / tile, ni = 0, ns = 0, nslots = 0;

	for (int64_t r = 0; r < nt; r++) {
		int64_t cnt = ptr[r + 1] - ptr[r], subs = plan_subs(n, tile, bm, r);
		for (int64_t sub = 0; sub < subs; sub++) {
			if (cnt <= piece) {
				if (p->items)
					p->items[ni] = (mk_block_item){(int32_t)r, (int32_t)sub, 0, cnt, -1};
				ni++;
				continue;
			}
			if (p->splits)
				p->splits[ns] = (mk_block_split){(int32_t)r, (int32_t)sub, nslots,
								 nslots + (cnt + piece - 1) / piece};
			ns++;
			for (int64_t t = 0; t < cnt; t += piece, ni++, nslots++)
				if (p->items)
					p->items[ni] = (mk_block_item){(int32_t)r, (int32_t)sub, t,
								       t + piece < cnt ? t + piece : cnt,
								       nslots};
		}
	}
	p->nitems = ni;
	p->nsplits = ns;
	p->nslots = nslots;
}

int mk_block_plan_new(const int64_t *ptr, int64_t n, int64_t tile, int64_t bm, int64_t piece,
		      mk_block_plan *out)
{
	memset(out, 0, sizeof *out);
	if (n < 1 || n > INT32_MAX || tile < 1 || bm < 1 || piece < 1)
		return mk_error_set(MK_EINVAL, "block plan: n = %" PRId64 ", tile %" PRId64
				    ", %" PRId64 " rows per block, pieces of %" PRId64, n, tile, bm,
				    piece);
	plan_fill(out, ptr, n, tile, bm, piece);
	out->items = malloc((size_t)(out->nitems ? out->nitems : 1) * sizeof *out->items);
	out->splits = malloc((size_t)(out->nsplits ? out->nsplits : 1) * sizeof *out->splits);
	if (!out->items || !out->splits) {
		mk_block_plan_release(out);
		return mk_error_set(MK_ENOMEM, "out of memory for the block plan");
	}
	plan_fill(out, ptr, n, tile, bm, piece);
	return MK_OK;
}

void mk_block_plan_release(mk_block_plan *p)
{
	if (!p)
		return;
	free(p->items);
	free(p->splits);
	memset(p, 0, sizeof *p);
}
