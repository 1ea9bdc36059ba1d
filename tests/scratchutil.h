/* A fresh scratch directory per test (a Check fixture) and small file
 * helpers, shared by the I/O unit tests. */
#ifndef MK_SCRATCHUTIL_H
#define MK_SCRATCHUTIL_H

#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[PATH_MAX]; /* a fresh directory per test */

static inline void scratch_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/check_io.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

/* Counts the entries of the scratch directory, removing them if asked. */
static inline int scratch_walk(bool remove)
{
	char p[PATH_MAX + 256];
	DIR *d = opendir(scratch);
	struct dirent *e;
	int k = 0;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof p, "%s/%s", scratch, e->d_name);
			k += !remove || unlink(p) != 0;
		}
	closedir(d);
	return k;
}

static inline void scratch_teardown(void)
{
	scratch_walk(true);
	rmdir(scratch);
}

/* scratch/name; two slots, so that two names can be held at once. */
static inline const char *path(const char *name)
{
	static char buf[2][PATH_MAX + 64];
	static int slot;
	slot ^= 1;
	snprintf(buf[slot], sizeof buf[slot], "%s/%s", scratch, name);
	return buf[slot];
}

static inline void put_file(const char *p, const void *data, size_t len)
{
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

#endif
