/* The tiled kernels' passes: the tile geometry, the work items (a tile
 * row, or a piece of a long one), the packed key blocks, and the parallel
 * loop over the items (cpu_tiles.c computes each). */
#include "config.h"
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "cpu_rows.h"
#include "cpu_tiles.h"

#define MK_TILES_PARALLEL_WORK ((int64_t)1 << 20) /* n^2 d below which one thread runs */

/* dense and masked: 256 queries against 512 keys per score block (512 KiB,
 * in L2): sgemm's packing of K and V is shared by more queries and the
 * online softmax rescales less often (48 ms against 61 ms for 64 x 256 at
 * n = 2048, d = 64, 8 heads, 2 threads; measured) */
#define TILES_QUERY_TILE 256
#define TILES_KEY_BLOCK 512
#define TILES_STRIP_BYTES ((int64_t)32 << 10)
#define TILES_GROUP_WIDTH 256 /* block: tiles go to sgemm this many keys at a time */
#define TILES_MIN_PIECE 8   /* a block row is split only above this many tiles */

/* The most tiles one item takes: twice the mean row, so that only rows far
 * longer than the others are split. */
static int64_t tiles_piece(const tiles_pass *p)
{
	int64_t total = p->ptr ? p->ptr[p->nta] : p->nta * p->ntb;
	int64_t mean = (total + p->nta - 1) / p->nta;

	if (!p->ptr)
		return p->ntb > 0 ? p->ntb : 1; /* every row alike: no split */
	return 2 * mean > TILES_MIN_PIECE ? 2 * mean : TILES_MIN_PIECE;
}

static int64_t tiles_count(const tiles_pass *p, int64_t r)
{
	return p->ptr ? p->ptr[r + 1] - p->ptr[r] : p->ntb;
}

/* Fills wk->items (already sized) and the split lists. */
static void tiles_plan(const tiles_pass *p, tiles_work *wk, int64_t piece)
{
	int64_t ni = 0, ns = 0, nsplit = 0;

	for (int64_t r = 0; r < p->nta; r++) {
		int64_t cnt = tiles_count(p, r);
		if (cnt <= piece) {
			wk->items[ni++] = (tiles_item){ r, 0, cnt, -1, -1 };
			continue;
		}
		wk->split[nsplit] = r;
		wk->split_slot[nsplit++] = ns;
		for (int64_t t = 0; t < cnt; t += piece)
			wk->items[ni++] = (tiles_item){ r, t, tiles_min(t + piece, cnt), ns++, nsplit - 1 };
	}
	wk->split_slot[nsplit] = ns;
	wk->nitems = ni;
	wk->nslots = ns;
	wk->nsplit = nsplit;
}

void mk_tiles_work_release(tiles_work *wk)
{
	free(wk->items);
	free(wk->split);
	free(wk->split_slot);
	free(wk->part.m);
	free(wk->part.l);
	free(wk->part.o);
	free(wk->pieces);
	memset(wk, 0, sizeof *wk); /* released twice is released once */
}

bool mk_tiles_piece_done(const tiles_item *it, const tiles_work *wk, atomic_int *pieces)
{
	int want;

	if (it->slot < 0)
		return false;
	want = (int)(wk->split_slot[it->split + 1] - wk->split_slot[it->split]);
	return atomic_fetch_add_explicit(&pieces[it->split], 1, memory_order_acq_rel) + 1 == want;
}

/* copies: sets of piece counters, one per pass run at once on its items */
int mk_tiles_work_new(const tiles_pass *p, int64_t copies, tiles_work *wk)
{
	int64_t piece = tiles_piece(p), nitems = 0, nslots = 0, nsplit = 0;
	size_t rows;

	memset(wk, 0, sizeof *wk);
	for (int64_t r = 0; r < p->nta; r++) {
		int64_t cnt = tiles_count(p, r), pieces = (cnt + piece - 1) / piece;
		nitems += pieces > 1 ? pieces : 1;
		nslots += pieces > 1 ? pieces : 0;
		nsplit += pieces > 1;
	}
	rows = (size_t)(nslots * p->ta);
	wk->items = malloc((size_t)nitems * sizeof *wk->items);
	wk->split = malloc((size_t)(p->nta + 1) * sizeof *wk->split);
	wk->split_slot = malloc((size_t)(p->nta + 1) * sizeof *wk->split_slot);
	wk->part.m = malloc((rows ? rows : 1) * sizeof *wk->part.m);
	wk->part.l = malloc((rows ? rows : 1) * sizeof *wk->part.l);
	if (p->o && rows)
		wk->part.o = malloc(rows * (size_t)p->x->d * sizeof *wk->part.o);
	wk->pieces = malloc((size_t)(copies * nsplit + 1) * sizeof *wk->pieces);
	if (!wk->items || !wk->split || !wk->split_slot || !wk->part.m || !wk->part.l ||
	    (p->o && rows && !wk->part.o) || !wk->pieces) {
		mk_tiles_work_release(wk);
		return mk_error_set(MK_ENOMEM, "out of memory for %lld attention work items",
				    (long long)nitems);
	}
	for (int64_t c = 0; c < copies * nsplit; c++)
		atomic_init(&wk->pieces[c], 0);
	tiles_plan(p, wk, piece);
	return MK_OK;
}

void mk_tiles_scratch_release(tiles_scratch *w)
{
	free(w->s);
	free(w->nb);
	free(w->m);
	free(w->l);
	free(w->bp);
	free(w->vp);
	free(w->zero);
	free(w->sink);
	free(w->j0);
	free(w->width);
	free(w->test);
	free(w->live);
}

bool mk_tiles_scratch_new(const tiles_pass *p, tiles_scratch *w)
{
	size_t packed = p->group > 1 && !p->uk ? (size_t)(p->tw * p->x->d) : 1;
	size_t zero = (size_t)(p->tw > p->x->d ? p->tw : p->x->d);

	memset(w, 0, sizeof *w);
	w->s = malloc((size_t)(p->ta * p->tw) * sizeof *w->s);
	w->nb = malloc((size_t)p->tw * sizeof *w->nb);
	w->m = malloc((size_t)p->ta * sizeof *w->m);
	w->l = malloc((size_t)p->ta * sizeof *w->l);
	w->bp = malloc(packed * sizeof *w->bp);
	w->vp = p->v ? malloc(packed * sizeof *w->vp) : NULL;
	w->zero = calloc(zero, sizeof *w->zero);
	w->sink = malloc((size_t)p->x->d * sizeof *w->sink);
	w->j0 = malloc((size_t)p->group * sizeof *w->j0);
	w->width = malloc((size_t)p->group * sizeof *w->width);
	w->test = malloc((size_t)p->group * sizeof *w->test);
	w->live = malloc((size_t)p->group * sizeof *w->live);
	return w->s && w->nb && w->m && w->l && w->bp && (!p->v || w->vp) && w->zero && w->sink && w->j0 &&
	       w->width && w->test && w->live;
}

/* The a rows rounded to bf16 pairs for the bf16 levels, once per pass,
 * with mr zero rows past the last (a strip reads whole register blocks). */
uint32_t *mk_tiles_round_a(tiles_pass *p)
{
	int64_t d = p->x->d, mr = p->uk->mr, pad = p->uk->pad;
	int64_t np = ((d + 1) / 2 + pad - 1) / pad * pad, chunks = (p->na + mr - 1) / mr;
	uint32_t *abf = malloc((size_t)((chunks + 1) * mr * np) * sizeof *abf);

	if (!abf)
		return NULL;
	p->apairs = np;
#pragma omp parallel for schedule(static) if (p->na * d >= ((int64_t)1 << 16) && \
					      !mk_attn_in_parallel())
	for (int64_t c = 0; c <= chunks; c++) { /* chunk "chunks" is the zero rows */
		int64_t r0 = c * mr, rows = r0 < p->na ? tiles_min(mr, p->na - r0) : 0;
		mk_uk_bf16_round(p->a + (rows ? r0 * d : 0), d, rows, mr, 0, d, abf + r0 * np, np);
	}
	return abf;
}

void mk_tiles_pack_block(const tiles_pass *p, int64_t k)
{
	int64_t cols = tiles_min(p->tb, p->nb - k * p->tb), d = p->x->d;

	mk_uk_pack(p->uk, p->b + k * p->tb * d, cols, d, p->x->scale, p->packed + k * p->pstride);
	if (p->v)
		mk_uk_pack_v(p->uk, p->v + k * p->tb * d, cols, d, p->vpacked + k * p->pstride);
}

int64_t mk_tiles_packed_floats(tiles_pass *p)
{
	p->pstride = mk_uk_packed_size(p->uk, p->tb, p->x->d);
	return (p->v ? 2 : 1) * p->ntb * p->pstride;
}

static int tiles_run(tiles_pass *p)
{
	tiles_work wk;
	int ret = mk_tiles_work_new(p, 1, &wk);
	atomic_int fail;
	size_t packed_bytes = 0;
#ifdef OPENBLAS_VERSION
	/* inside the backend's parallel loop over slices the caller has set it;
	 * the micro-kernels call no BLAS */
	bool own_blas = !p->uk && !mk_attn_in_parallel();
	int blas_threads = own_blas ? openblas_get_num_threads() : 1;
#endif

	if (ret)
		return ret;
	atomic_init(&fail, 0);
	if (p->uk) {
		/* K and V together, on huge pages from 2 MiB: every pass fills
		 * them anew, and 4 KiB pages cost a fault each */
		size_t all = (size_t)mk_tiles_packed_floats(p);
		p->packed = mk_huge_take(all * sizeof *p->packed, &packed_bytes);
		p->vpacked = p->v && p->packed ? p->packed + p->ntb * p->pstride : NULL;
		if (!p->packed) {
			mk_tiles_work_release(&wk);
			return mk_error_set(MK_ENOMEM, "out of memory for %lld packed keys",
					    (long long)p->nb);
		}
		if (p->uk->bf16 && !(p->abf = mk_tiles_round_a(p))) {
			mk_huge_give(p->packed, packed_bytes);
			mk_tiles_work_release(&wk);
			return mk_error_set(MK_ENOMEM, "out of memory for %lld rounded rows",
					    (long long)p->na);
		}
	}
#ifdef OPENBLAS_VERSION
	/* OpenBLAS threads of its own under each of ours oversubscribe the
	 * cores (twice as slow, measured); its count is process-wide, so it is
	 * lowered for the pass and put back after. */
	if (!p->uk)
		openblas_set_num_threads(1);
#endif
	/* small slices: waking the other threads costs more than the work (and
	 * on a loaded machine a sleeping thread costs a scheduler tick) */
#pragma omp parallel if (p->na * p->nb * p->x->d >= MK_TILES_PARALLEL_WORK)
	{
		tiles_scratch w;
		bool ok = mk_tiles_scratch_new(p, &w);
		if (!ok)
			atomic_store(&fail, 1);
		/* each b (and v) block is packed once and read by every tile that
		 * visits it */
#pragma omp for schedule(static)
		for (int64_t k = 0; k < (p->uk ? p->ntb : 0); k++)
			mk_tiles_pack_block(p, k);
		/* a split row is merged by the thread finishing its last piece
		 * (unless a piece was skipped: the pass fails then) */
#pragma omp for schedule(dynamic)
		for (int64_t k = 0; k < wk.nitems; k++) {
			if (ok)
				mk_tiles_item_run(p, &w, &wk, &wk.items[k]);
			if (mk_tiles_piece_done(&wk.items[k], &wk, wk.pieces) && ok &&
			    !atomic_load(&fail))
				mk_tiles_merge(p, &wk, wk.items[k].split);
		}
		mk_tiles_scratch_release(&w);
	}
	mk_tiles_work_release(&wk);
	mk_huge_give(p->packed, packed_bytes); /* vpacked lies in it */
	p->packed = p->vpacked = NULL;
	free(p->abf);
	p->abf = NULL;
#ifdef OPENBLAS_VERSION
	if (own_blas)
		openblas_set_num_threads(blas_threads);
#endif
	if (atomic_load(&fail))
		return mk_error_set(MK_ENOMEM, "out of memory for attention tile buffers");
	return MK_OK;
}

/* The tile geometry shared by both passes: na rows reduced against nb. */
int mk_tiles_setup(const mk_attn_slice *x, bool cols, tiles_pass *p)
{
	const mk_attn_layout *l = x->mask;

	memset(p, 0, sizeof *p);
	p->x = x;
	p->na = cols ? x->kv : x->n;
	p->nb = cols ? x->n : x->kv;
	if (x->n <= 0 || x->kv <= 0 || x->d <= 0 || x->n > INT32_MAX || x->kv > INT32_MAX ||
	    x->d > INT32_MAX)
		return mk_error_set(MK_EINVAL, "attention slice of n = %lld, kv_len = %lld, d = %lld",
				    (long long)x->n, (long long)x->kv, (long long)x->d);
	if (x->kernel != MK_KERNEL_DENSE &&
	    (!l || l->n != x->n || l->kv != x->kv || l->tile <= 0))
		return mk_error_set(MK_EINVAL, "kernel '%s' needs a layout of %lld x %lld",
				    mk_attn_kernel_name(x->kernel), (long long)x->n,
				    (long long)x->kv);
	p->uk = x->bf16 ? mk_uk_bf16() : mk_uk_get();
	if (x->bf16 && !p->uk) /* the backend's configure refuses it first */
		return mk_error_set(MK_EINVAL, "bf16 needs a CPU with AVX512_BF16");
	switch (x->kernel) {
	case MK_KERNEL_DENSE:
	case MK_KERNEL_MASKED:
		p->ta = TILES_QUERY_TILE;
		p->tb = TILES_KEY_BLOCK;
		/* the micro-kernels keep a block's packed K and V in L2 (256 KiB of
		 * its 512): fewer keys per block past d = 64 */
		if (p->uk && x->d > 64)
			p->tb = TILES_KEY_BLOCK * 64 / x->d > 64 ? TILES_KEY_BLOCK * 64 / x->d : 64;
		/* a strip's scores (mr x tb floats) within 32 KiB of L1: AMX's
		 * 32-row strips take 256 keys (12 % faster than 512 at d = 64,
		 * bf16; 128 was slower; measured) */
		if (p->uk && p->tb * p->uk->mr * (int64_t)sizeof(float) > TILES_STRIP_BYTES)
			p->tb = TILES_STRIP_BYTES / ((int64_t)sizeof(float) * p->uk->mr);
		/* whole register strips: 256 rows are 21 strips of 12 and 4 rows
		 * computed as a 22nd whole one (3 % of the products wasted) */
		if (p->uk)
			p->ta = TILES_QUERY_TILE / p->uk->mr * p->uk->mr;
		p->mask_all = x->kernel == MK_KERNEL_MASKED;
		break;
	case MK_KERNEL_BLOCK:
		p->ta = l->tile;
		p->tb = l->tile;
		break;
	default:
		return mk_error_set(MK_EINVAL, "kernel '%s' is not a tiled kernel",
				    mk_attn_kernel_name(x->kernel));
	}
	p->ta = tiles_min(p->ta, p->na);
	/* block tiles go to sgemm a few at a time: one 64 x 64 tile per call
	 * costs half as much again as dense's wider blocks (measured) */
	p->group = p->tb < TILES_GROUP_WIDTH ? TILES_GROUP_WIDTH / p->tb : 1;
	p->tw = p->group * p->tb;
	p->nta = (p->na + p->ta - 1) / p->ta;
	p->ntb = (p->nb + p->tb - 1) / p->tb;
	return MK_OK;
}

void mk_tiles_row_fields(tiles_pass *p, const float *g, float *f, bool with_v)
{
	const mk_attn_slice *x = p->x;

	p->a = x->q;
	p->b = x->k;
	p->bias = g;
	p->lse = f;
	p->v = with_v ? x->v : NULL;
	p->o = with_v ? x->o : NULL;
	if (x->kernel == MK_KERNEL_BLOCK) {
		p->ptr = x->mask->rptr;
		p->idx = x->mask->rcol;
		p->full = x->mask->rfull;
	}
}

int mk_cpu_tiles_row_pass(const mk_attn_slice *x, const float *g, float *f, bool with_v)
{
	tiles_pass p;
	float *bound = NULL;
	bool usable = false;
	int ret = mk_tiles_setup(x, false, &p);

	if (ret)
		return ret;
	/* softmax's scores have a cheap bound: exponentials from it need no
	 * running maximum (a pass over each score block) nor rescaled outputs */
	if (!g && !(bound = mk_tiles_bounds(x, &usable)))
		return mk_error_set(MK_ENOMEM, "out of memory for %lld row bounds", (long long)x->n);
	p.shift = usable ? bound : NULL;
	mk_tiles_row_fields(&p, g, f, with_v);
	ret = tiles_run(&p);
	free(bound);
	return ret;
}

int mk_cpu_tiles_col_pass(const mk_attn_slice *x, const float *f, float *g)
{
	tiles_pass p;
	int ret = mk_tiles_setup(x, true, &p);

	if (ret)
		return ret;
	p.a = x->k;
	p.b = x->q;
	p.bias = f;
	p.lse = g;
	p.transposed = true;
	if (x->kernel == MK_KERNEL_BLOCK) {
		p.ptr = x->mask->cptr;
		p.idx = x->mask->crow;
		p.full = x->mask->cfull;
	}
	return tiles_run(&p);
}
