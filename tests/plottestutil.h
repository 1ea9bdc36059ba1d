/* Helpers shared by the picture tests (check_plot, check_gnuplot): a scratch
 * directory per test, small files in it, and PNGs read back with libpng. */
#ifndef MK_PLOTTESTUTIL_H
#define MK_PLOTTESTUTIL_H

/* nftw() is an X/Open extension: the includer defines _XOPEN_SOURCE before
 * its first #include, since a later definition has no effect. */
#if !defined(_XOPEN_SOURCE) || _XOPEN_SOURCE < 500
#error "define _XOPEN_SOURCE 700 before including plottestutil.h"
#endif

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <png.h>

static char scratch[PATH_MAX]; /* a fresh directory per test */

static inline int rm_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(p) : unlink(p);
}

/* scratch/name, in one of four buffers reused in turn. */
static inline const char *path(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int next;
	char *b = buf[next++ % 4];
	ck_assert(snprintf(b, sizeof buf[0], "%s/%s", scratch, name) < (int)sizeof buf[0]);
	return b;
}

/* Entries of a directory (of the scratch directory if name is NULL). */
static inline int count_entries(const char *name)
{
	DIR *d = opendir(name ? path(name) : scratch);
	struct dirent *e;
	int k = 0;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		k += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return k;
}

/* Makes scratch with subdirectories tmp (the new TMPDIR) and out. */
static inline void scratch_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/check_plot.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
	/* temporary files of the code under test go here, where a test can see them */
	ck_assert_int_eq(mkdir(path("tmp"), 0700), 0);
	ck_assert_int_eq(setenv("TMPDIR", path("tmp"), 1), 0);
	ck_assert_int_eq(mkdir(path("out"), 0700), 0);
}

static inline void scratch_teardown(void)
{
	nftw(scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void put_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The whole file, NUL-terminated; the caller frees it. */
static inline char *get_file(const char *p)
{
	FILE *f = fopen(p, "rb");
	struct stat st;
	char *buf;
	ck_assert_msg(f && fstat(fileno(f), &st) == 0, "cannot open '%s'", p);
	buf = calloc((size_t)st.st_size + 1, 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	return buf;
}

static inline void expect_file(const char *p, const char *want)
{
	char *text = get_file(p);
	ck_assert_str_eq(text, want);
	free(text);
}

struct image {
	uint32_t w, h;
	uint8_t *rgb; /* row by row, 3 bytes a pixel; the caller frees it */
};

static inline struct image read_png(const char *p)
{
	png_image img = {.version = PNG_IMAGE_VERSION};
	struct image out;
	ck_assert_msg(png_image_begin_read_from_file(&img, p), "%s: %s", p, img.message);
	img.format = PNG_FORMAT_RGB;
	out.w = img.width;
	out.h = img.height;
	out.rgb = malloc(PNG_IMAGE_SIZE(img));
	ck_assert_msg(png_image_finish_read(&img, NULL, out.rgb, 0, NULL), "%s: %s", p,
		      img.message);
	return out;
}

#endif
