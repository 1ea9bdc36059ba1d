/*
 * PNG pictures of masks (RGB, 8 bits per channel).
 *
 * Up to png_max_px (default 1024) tokens, each cell is an s x s block of
 * pixels with s = max(1, min(16, 512 / n)), so small masks are legible: set
 * cells dark (viridis at 0), clear cells white, and from s = 4 up a 1-pixel
 * light grey line between neighbouring cells.
 *
 * Beyond that the mask is reduced by f = ceil(n / png_max_px) to a picture
 * of side ceil(n / f): each pixel shows the density d of set cells among the
 * f x f cells it covers (fewer at the clipped right and bottom edges), white
 * when d = 0 and viridis(1 - t) otherwise, with t = log(1 + 255 d) / log 256
 * so that a single cell in a pixel still shows (a linear scale would leave
 * sparse patterns in pale yellow near white) and a full region is as dark as
 * a set cell above.  Rows are streamed; memory is O(n).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "internal.h"
#include "png_quiet.h"

#define MK_PNG_DEFAULT_MAX_PX 1024
#define MK_PNG_TARGET_PX 512 /* the side small masks are scaled up towards */
#define MK_PNG_MAX_CELL 16
#define MK_PNG_GRID_FROM 4 /* smallest cell that gets grid lines */

static const uint8_t mk_png_white[3] = {255, 255, 255};
static const uint8_t mk_png_grid[3] = {210, 210, 210};

struct mk_png {
	png_structp png;
	png_infop info;
	char msg[MK_PNG_MSG]; /* libpng's message when it fails */
	const mk_rows *r;
	int64_t scale;     /* pixels per cell when not reduced, else 1 */
	int64_t factor;    /* cells per pixel when reduced, else 1 */
	int64_t side;      /* image width and height */
	uint64_t *row;     /* one mask row */
	uint8_t *pix;      /* one image row, 3 * side bytes */
	uint64_t *counts;  /* set cells per pixel of the current pixel row */
};

void mk_png_quiet_error(png_structp png, png_const_charp msg)
{
	snprintf(png_get_error_ptr(png), MK_PNG_MSG, "%s", msg);
	png_longjmp(png, 1);
}

void mk_png_quiet_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* errno of the last failed write; libpng's own writer keeps only "Write Error" */
static _Thread_local int mk_png_errno;

static void mk_png_write_cb(png_structp png, png_bytep data, size_t len)
{
	if (fwrite(data, 1, len, png_get_io_ptr(png)) != len) {
		mk_png_errno = errno ? errno : EIO;
		png_error(png, "write failed");
	}
}

static void mk_png_flush_cb(png_structp png)
{
	if (fflush(png_get_io_ptr(png)) != 0) {
		mk_png_errno = errno ? errno : EIO;
		png_error(png, "write failed");
	}
}

void mk_png_set_file(png_structp png, FILE *f)
{
	mk_png_errno = 0;
	png_set_write_fn(png, f, mk_png_write_cb, mk_png_flush_cb);
}

int mk_png_fail(const char *msg)
{
	if (mk_png_errno)
		return mk_error_errno(mk_png_errno, "write failed");
	/* the picture's sizes were checked before: what is left is libpng's
	 * own failure (out of memory), not the input's */
	return mk_error_set(MK_ESYS, "PNG: %s", msg);
}

static void mk_png_put(uint8_t *px, const uint8_t rgb[3])
{
	memcpy(px, rgb, 3);
}

/* Pixel row(s) of one mask row at s pixels per cell. */
static void mk_png_cells(struct mk_png *p, int64_t i)
{
	int64_t n = p->r->n, s = p->scale;
	bool grid = s >= MK_PNG_GRID_FROM;
	uint8_t ink[3], *px = p->pix;

	mk_colormap_viridis(0.0, ink);
	p->r->row(p->r->ctx, i, p->row);
	for (int64_t j = 0; j < n; j++) {
		const uint8_t *c = mk_bit_test(p->row, j) ? ink : mk_png_white;
		for (int64_t x = 0; x < s; x++, px += 3)
			mk_png_put(px, grid && x == s - 1 && j < n - 1 ? mk_png_grid : c);
	}
	for (int64_t y = 0; y < s; y++) {
		if (grid && y == s - 1 && i < n - 1) {
			for (int64_t x = 0; x < p->side; x++)
				mk_png_put(p->pix + 3 * x, mk_png_grid);
		}
		png_write_row(p->png, p->pix);
	}
}

/* Set bits of w in [lo, hi). */
static uint64_t mk_png_count_range(const uint64_t *w, int64_t lo, int64_t hi)
{
	uint64_t c = 0;
	int64_t wl = lo >> 6, wh = (hi - 1) >> 6;
	uint64_t first = ~(uint64_t)0 << (lo & 63);
	uint64_t last = (hi & 63) ? ~(~(uint64_t)0 << (hi & 63)) : ~(uint64_t)0;

	if (wl == wh)
		return (uint64_t)__builtin_popcountll(w[wl] & first & last);
	c = (uint64_t)__builtin_popcountll(w[wl] & first);
	for (int64_t k = wl + 1; k < wh; k++)
		c += (uint64_t)__builtin_popcountll(w[k]);
	return c + (uint64_t)__builtin_popcountll(w[wh] & last);
}

/* One pixel row covering mask rows [y*f, min(n, (y+1)*f)). */
static void mk_png_reduced(struct mk_png *p, int64_t y)
{
	int64_t n = p->r->n, f = p->factor;
	int64_t i0 = y * f, i1 = i0 + f < n ? i0 + f : n;

	memset(p->counts, 0, (size_t)p->side * sizeof *p->counts);
	for (int64_t i = i0; i < i1; i++) {
		p->r->row(p->r->ctx, i, p->row);
		for (int64_t x = 0; x < p->side; x++) {
			int64_t j0 = x * f, j1 = j0 + f < n ? j0 + f : n;
			p->counts[x] += mk_png_count_range(p->row, j0, j1);
		}
	}
	for (int64_t x = 0; x < p->side; x++) {
		int64_t j0 = x * f, j1 = j0 + f < n ? j0 + f : n;
		double area = (double)(i1 - i0) * (double)(j1 - j0);
		if (p->counts[x] == 0)
			mk_png_put(p->pix + 3 * x, mk_png_white);
		else
			mk_colormap_viridis(1.0 - log1p(255.0 * (double)p->counts[x] / area) /
						    log(256.0), p->pix + 3 * x);
	}
	png_write_row(p->png, p->pix);
}

/* Everything that may longjmp out; called under mk_io_write_png's setjmp. */
static void mk_png_stream(struct mk_png *p, FILE *f)
{
	mk_png_set_file(p->png, f);
	png_set_IHDR(p->png, p->info, (png_uint_32)p->side, (png_uint_32)p->side, 8,
		     PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	png_write_info(p->png, p->info);
	if (p->factor > 1) {
		for (int64_t y = 0; y < p->side; y++)
			mk_png_reduced(p, y);
	} else {
		for (int64_t i = 0; i < p->r->n; i++)
			mk_png_cells(p, i);
	}
	png_write_end(p->png, p->info);
}

static int mk_png_geometry(struct mk_png *p, const mk_write_opts *o)
{
	int64_t n = p->r->n, max_px = o->png_max_px ? o->png_max_px : MK_PNG_DEFAULT_MAX_PX;

	if (max_px < 1 || max_px > PNG_UINT_31_MAX / MK_PNG_MAX_CELL)
		return mk_error_set(MK_EINVAL, "PNG size limit %" PRId64 " is out of range (1 to %d)",
				    max_px, (int)(PNG_UINT_31_MAX / MK_PNG_MAX_CELL));
	p->scale = p->factor = 1;
	if (n <= max_px) {
		p->scale = MK_PNG_TARGET_PX / n;
		p->scale = p->scale < 1 ? 1 : p->scale > MK_PNG_MAX_CELL ? MK_PNG_MAX_CELL : p->scale;
		p->side = n * p->scale;
	} else {
		p->factor = (n + max_px - 1) / max_px;
		p->side = (n + p->factor - 1) / p->factor;
	}
	return MK_OK;
}

int mk_io_write_png(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	struct mk_png p = {.r = r};
	int ret;

	ret = mk_png_geometry(&p, o);
	if (ret)
		return ret;
	p.row = malloc(mk_words(r->n) * sizeof *p.row);
	p.pix = malloc((size_t)p.side * 3);
	p.counts = malloc((size_t)p.side * sizeof *p.counts);
	if (!p.row || !p.pix || !p.counts) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	p.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, p.msg, mk_png_quiet_error,
					 mk_png_quiet_warning);
	p.info = p.png ? png_create_info_struct(p.png) : NULL;
	if (!p.png || !p.info) {
		ret = mk_error_set(MK_ENOMEM, "out of memory (libpng)");
		goto out;
	}
	if (setjmp(png_jmpbuf(p.png))) {
		ret = mk_png_fail(p.msg);
		goto out;
	}
	mk_png_stream(&p, f);
out:
	if (p.png)
		png_destroy_write_struct(&p.png, p.info ? &p.info : NULL);
	free(p.row);
	free(p.pix);
	free(p.counts);
	return ret;
}
