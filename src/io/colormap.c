/*
 * Colour maps for pictures of masks and matrices (in io, the lowest floor
 * that draws: io_png.c writes masks as pictures, src/plot above it draws
 * matrices).
 *
 * Viridis is perceptually uniform and reads correctly in grey scale and for
 * the common colour-vision deficiencies, so densities stay comparable across
 * a picture.  We interpolate linearly between eleven colours sampled from it
 * at t = 0, 0.1, ..., 1; between samples the map is close to straight in RGB,
 * so the error against the full 256-entry table is a few levels at most.
 */
#include "config.h"
#include <math.h>
#include "internal.h"

#define MK_VIRIDIS_STOPS 11

static const uint8_t mk_viridis_stops[MK_VIRIDIS_STOPS][3] = {
	{68, 1, 84},    /* #440154 */
	{72, 37, 118},  /* #482576 */
	{65, 68, 135},  /* #414487 */
	{53, 96, 141},  /* #35608d */
	{42, 120, 142}, /* #2a788e */
	{33, 144, 140}, /* #21908c */
	{34, 168, 132}, /* #22a884 */
	{67, 191, 113}, /* #43bf71 */
	{122, 209, 81}, /* #7ad151 */
	{187, 223, 39}, /* #bbdf27 */
	{253, 231, 37}, /* #fde725 */
};

void mk_colormap_viridis(double t, uint8_t rgb[3])
{
	double x, frac;
	int k;

	/* NaN fails every comparison, so test it first and treat it as 0. */
	if (isnan(t) || t < 0.0)
		t = 0.0;
	if (t > 1.0)
		t = 1.0;
	x = t * (MK_VIRIDIS_STOPS - 1);
	k = (int)x;
	if (k >= MK_VIRIDIS_STOPS - 1) {
		for (int c = 0; c < 3; c++)
			rgb[c] = mk_viridis_stops[MK_VIRIDIS_STOPS - 1][c];
		return;
	}
	frac = x - k;
	for (int c = 0; c < 3; c++) {
		double a = mk_viridis_stops[k][c], b = mk_viridis_stops[k + 1][c];
		rgb[c] = (uint8_t)lround(a + (b - a) * frac);
	}
}
