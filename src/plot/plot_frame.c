/*
 * The frame of a heatmap panel: its label, the position indices along its
 * left and bottom edges, and a colour bar with values on its right; and the
 * title over the grid.  Text is the 5 x 7 font of font.c at twice its size,
 * the title at three times (smaller only when it would not fit), which stays
 * legible on a screen and in a paper at the widths we draw.
 *
 * Ticks fall on "nice" values, 1, 2 or 5 times a power of ten, spaced so
 * that their labels never touch: along an axis the step grows until one
 * label plus a margin fits between ticks; on the colour bar there are 3 to
 * 9 (fewer on a short bar).  An entry's tick sits at the middle of the pixels that show it.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "plot_internal.h"

#define FRAME_TEXT 2    /* the font's scale */
#define FRAME_TITLE_TEXT 3 /* the title's: 15 x 21 pixels a glyph */
#define FRAME_TICK 5    /* tick length */
#define FRAME_PAD 3     /* between a tick and its label */
#define FRAME_BAR_GAP 12
#define FRAME_BAR_W 16
#define FRAME_BAR_CHARS 9 /* the widest tick value, mk_frame_number's limit */
/* between the colour bar's ticks and their values: closer, a tick reads as
 * a minus sign */
#define FRAME_BAR_PAD 8

#define frame_ink MK_PAL_INK

static int64_t frame_text_h(const mk_frame *f)
{
	return MK_FONT_H * f->text;
}

void mk_frame_layout(mk_frame *f, int64_t k, bool labels, bool title)
{
	char last[32];
	int64_t th;

	f->text = FRAME_TEXT;
	th = frame_text_h(f);
	snprintf(last, sizeof last, "%" PRId64, k - 1);
	f->left = 2 * FRAME_PAD + mk_font_width(last, f->text) + FRAME_PAD + FRAME_TICK + 1;
	f->top = labels ? th + 10 : 8;
	f->bottom = 1 + FRAME_TICK + FRAME_PAD + th + 8;
	f->right = FRAME_BAR_GAP + FRAME_BAR_W + 1 + FRAME_TICK + FRAME_BAR_PAD +
		   FRAME_BAR_CHARS * (MK_FONT_W + 1) * f->text + 8;
	f->title_h = title ? MK_FONT_H * FRAME_TITLE_TEXT + 18 : 0;
}

/* The least of 1, 2, 5 times a power of ten that is at least raw (> 0). */
static double frame_nice(double raw)
{
	double p = pow(10, floor(log10(raw)));

	for (int q = 0; q < 8; q++, p *= 10) {
		if (p >= raw)
			return p;
		if (2 * p >= raw)
			return 2 * p;
		if (5 * p >= raw)
			return 5 * p;
	}
	return raw;
}

void mk_frame_number(double v, double step, char buf[16])
{
	int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	int len;

	if (fabs(v) < step * 1e-6)
		v = 0; /* no "-0" from rounding */
	len = decimals <= 6 && fabs(v) < 1e6 ? snprintf(buf, 16, "%.*f", decimals, v) : 99;
	if (len > FRAME_BAR_CHARS)
		snprintf(buf, 16, "%.2g", v);
}

static void frame_text_right(const mk_frame *f, const mk_canvas *cv, int64_t right, int64_t cy,
			     const char *s)
{
	mk_font_draw(cv, right - mk_font_width(s, f->text), cy - frame_text_h(f) / 2, f->text, s,
		     frame_ink);
}

/* Ticks at multiples of a nice step along both axes. */
static void frame_axes(const mk_frame *f, const mk_canvas *cv, int64_t x, int64_t y,
		       int64_t side, int64_t k)
{
	char last[32], s[32];
	double step;

	snprintf(last, sizeof last, "%" PRId64, k - 1);
	/* room for one label and 2 characters between neighbours */
	step = frame_nice(fmax(1.0, (double)k * (double)(mk_font_width(last, f->text) +
							   2 * (MK_FONT_W + 1) * f->text) /
					   (double)side));
	for (double i = 0; i <= (double)(k - 1); i += step) {
		int64_t at = (int64_t)floor((i + 0.5) * (double)side / (double)k);
		snprintf(s, sizeof s, "%" PRId64, (int64_t)i);
		/* bottom axis */
		mk_canvas_fill(cv, x + at, y + side + 1, 1 + f->text / 2, FRAME_TICK, frame_ink);
		mk_font_draw(cv, x + at - mk_font_width(s, f->text) / 2,
			     y + side + 1 + FRAME_TICK + FRAME_PAD, f->text, s, frame_ink);
		/* left axis */
		mk_canvas_fill(cv, x - 1 - FRAME_TICK, y + at, FRAME_TICK, 1 + f->text / 2, frame_ink);
		frame_text_right(f, cv, x - 1 - FRAME_TICK - FRAME_PAD, y + at, s);
	}
}

/* A 1-pixel box around the rectangle (x, y, w, h). */
static void frame_box(const mk_canvas *cv, int64_t x, int64_t y, int64_t w, int64_t h)
{
	mk_canvas_fill(cv, x - 1, y - 1, w + 2, 1, frame_ink);
	mk_canvas_fill(cv, x - 1, y + h, w + 2, 1, frame_ink);
	mk_canvas_fill(cv, x - 1, y, 1, h, frame_ink);
	mk_canvas_fill(cv, x + w, y, 1, h, frame_ink);
}

/* The colour bar from lo (bottom) to hi (top) at x, with 3 to 9 values. */
static void frame_bar(const mk_frame *f, const mk_canvas *cv, int64_t x, int64_t y,
		      int64_t side, double lo, double hi)
{
	int64_t th = frame_text_h(f), lx = x + FRAME_BAR_W + 1 + FRAME_TICK + FRAME_BAR_PAD;
	double step, first;
	char s[16];

	for (int64_t r = 0; r < side; r++) {
		uint8_t q = mk_pic_level(hi > lo && side > 1 ? 1.0 - (double)r / (double)(side - 1)
						       : 0.5);
		mk_canvas_fill(cv, x, y + r, FRAME_BAR_W, 1, q);
	}
	frame_box(cv, x, y, FRAME_BAR_W, side);
	if (!(hi > lo)) {
		/* a constant panel: its one value at the middle */
		mk_frame_number(lo, fabs(lo) > 0 ? fabs(lo) / 1000 : 1, s);
		mk_font_draw(cv, lx, y + side / 2 - th / 2, f->text, s, frame_ink);
		return;
	}
	step = frame_nice((hi - lo) / 8);
	while ((hi - lo) / step + 1 > (double)side / (double)(th + 6) && step < hi - lo)
		step = frame_nice(step * 1.01);
	first = ceil(lo / step - 1e-9) * step;
	for (double v = first; v <= hi + step * 1e-9; v += step) {
		int64_t at = (int64_t)lround((hi - v) / (hi - lo) * (double)(side - 1));
		mk_canvas_fill(cv, x + FRAME_BAR_W + 1, y + at, FRAME_TICK, 1 + f->text / 2,
			       frame_ink);
		mk_frame_number(v, step, s);
		mk_font_draw(cv, lx, y + at - th / 2, f->text, s, frame_ink);
	}
}

void mk_frame_draw(const mk_frame *f, const mk_canvas *cv, int64_t x, int64_t y, int64_t side,
		   int64_t k, const char *label, double lo, double hi)
{
	frame_box(cv, x, y, side, side);
	frame_axes(f, cv, x, y, side, k);
	if (label)
		mk_font_draw(cv, x + (side - mk_font_width(label, f->text)) / 2,
			     y - f->top + 4, f->text, label, frame_ink);
	if (!isnan(lo))
		frame_bar(f, cv, x + side + FRAME_BAR_GAP, y, side, lo, hi);
}

void mk_frame_title(const mk_frame *f, const mk_canvas *cv, const char *title)
{
	int scale = FRAME_TITLE_TEXT;

	while (scale > 1 && mk_font_width(title, scale) > cv->w - 8)
		scale--;
	mk_font_draw(cv, (cv->w - mk_font_width(title, scale)) / 2 > 4 ?
			 (cv->w - mk_font_width(title, scale)) / 2 : 4,
		     (f->title_h - MK_FONT_H * scale) / 2, scale, title, frame_ink);
}
