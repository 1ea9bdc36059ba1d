/*
 * What gnuplot left: its picture checked as a whole PNG or SVG.  gnuplot
 * exits 0 when it could not write the picture (a full disk, a file size
 * limit), so a picture cut short is how a failed write shows; the file
 * system then says why.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "internal.h"
#include "plot_internal.h"

/* The last bytes of f (at most cap) into buf; their count. */
static size_t mk_gp_tail(FILE *f, unsigned char *buf, size_t cap)
{
	long size;

	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0)
		return 0;
	if ((size_t)size < cap)
		cap = (size_t)size;
	if (fseek(f, size - (long)cap, SEEK_SET) != 0)
		return 0;
	return fread(buf, 1, cap, f);
}

/* A picture is whole when it ends as its format ends: a PNG with its IEND
 * chunk, an SVG with its closing tag (and white space). */
static bool mk_gp_whole(FILE *f, bool svg)
{
	static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	unsigned char tail[64];
	size_t n = mk_gp_tail(f, tail, sizeof tail);

	if (!svg)
		return n >= sizeof iend && !memcmp(tail + n - sizeof iend, iend, sizeof iend);
	while (n > 0 && isspace(tail[n - 1]))
		n--;
	return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}

/* gnuplot exits 0 when its picture could not be written: a picture cut
 * short is a write failure, a full disk when the file system says so. */
static bool mk_gp_disk_full(const char *path)
{
	struct statvfs fs;

	if (statvfs(path, &fs) != 0)
		return false;
	return (geteuid() == 0 ? fs.f_bfree : fs.f_bavail) == 0;
}

/* gnuplot ran into a file size limit (ulimit -f) when the picture is as
 * large as the limit */
static bool mk_gp_at_size_limit(const char *path)
{
	struct rlimit rl;
	struct stat st;

	return getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	       stat(path, &st) == 0 && (rlim_t)st.st_size >= rl.rlim_cur;
}

int mk_gp_cut_short(const char *png)
{
	if (mk_gp_disk_full(png))
		return mk_error_errno(ENOSPC, "gnuplot could not write the picture");
	if (mk_gp_at_size_limit(png))
		return mk_error_errno(EFBIG, "gnuplot could not write the picture");
	return mk_error_set(MK_ESYS, "gnuplot's picture is cut short (the disk full, a file size "
			    "limit, or gnuplot stopped?)");
}

/* A device such as /dev/null takes whatever comes; a file must be a PNG
 * (or an SVG when the output is named .svg), and a whole one. */
int mk_gp_check_picture(const char *png, bool svg, const char *template_name)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	bool whole = false, head_ok;
	unsigned char head[8];
	struct stat st;
	FILE *f;
	size_t n;

	if (stat(png, &st) == 0 && !S_ISREG(st.st_mode))
		return MK_OK;
	f = fopen(png, "rb");
	n = f ? fread(head, 1, sizeof head, f) : 0;
	head_ok = svg ? n >= 5 && (!memcmp(head, "<?xml", 5) || !memcmp(head, "<svg", 4))
		      : n == sizeof head && !memcmp(head, sig, sizeof sig);
	if (f && head_ok)
		whole = mk_gp_whole(f, svg);
	if (f)
		fclose(f);
	if (head_ok && whole)
		return MK_OK;
	if (head_ok || mk_gp_disk_full(png))
		return mk_gp_cut_short(png);
	if (svg)
		return mk_error_set(MK_EIO, "gnuplot produced no SVG (template '%s' must set terminal "
				    "svg when svg is 1)", template_name);
	return mk_error_set(MK_EIO, "gnuplot produced no PNG (template '%s' must set terminal "
			    "pngcairo and 'set output output')", template_name);
}

bool mk_gp_write_failed(const char *png)
{
	return mk_gp_disk_full(png) || mk_gp_at_size_limit(png);
}
