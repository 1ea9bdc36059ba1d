/* Unit tests for mk_io_uncache_replaced (src/io/io.c): the page cache of
 * the file an atomic write replaces is dropped, and nothing else's: not a
 * file with another link (it outlives the rename), not a FIFO (opening it
 * must not wait for a writer), and no file's contents change.  Residency
 * is read with mincore on a fresh shared mapping, which reports the page
 * cache of the file; where the file system keeps its pages whatever is
 * asked (tmpfs), the dropping is not asserted, the rest is.  And the
 * handle mk_io_atomic holds on a large file it replaces (its freeing is
 * left to a thread) is closed, not leaked. */
#define _GNU_SOURCE /* mincore */
#include "config.h"
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "internal.h"
#include "testutil.h"
#include "scratchutil.h"

#define UC_BYTES ((size_t)1 << 20)
#define UC_TMPFS 0x01021994 /* statfs's f_type of tmpfs */

/* A synced file of UC_BYTES, each byte its offset's low bits, read once
 * so that its pages are cached. */
static void uc_file(const char *p)
{
	unsigned char *b = malloc(UC_BYTES);
	int fd;

	ck_assert_ptr_nonnull(b);
	for (size_t k = 0; k < UC_BYTES; k++)
		b[k] = (unsigned char)(k * 7);
	put_file(p, b, UC_BYTES);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(read(fd, b, UC_BYTES), (ssize_t)UC_BYTES);
	close(fd);
	free(b);
}

/* Pages of the file at p in the page cache. */
static size_t uc_resident(const char *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = UC_BYTES / page, k = 0;
	unsigned char *vec = malloc(n);
	int fd = open(p, O_RDONLY);
	void *m;

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(vec);
	m = mmap(NULL, UC_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mincore(m, UC_BYTES, vec), 0);
	for (size_t i = 0; i < n; i++)
		k += vec[i] & 1;
	munmap(m, UC_BYTES);
	close(fd);
	free(vec);
	return k;
}

/* The file still holds what uc_file wrote. */
static void uc_same(const char *p)
{
	unsigned char *b = malloc(UC_BYTES);
	FILE *f = fopen(p, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, UC_BYTES, f), UC_BYTES);
	for (size_t k = 0; k < UC_BYTES; k++)
		ck_assert_uint_eq(b[k], (unsigned char)(k * 7));
	fclose(f);
	free(b);
}

START_TEST(drops_the_replaced_file_only)
{
	char linked[PATH_MAX + 64], other[PATH_MAX + 64];
	struct statfs fs;
	int tmp;

	ck_assert_int_ge(tmp = open(path("o.npy.tmp"), O_RDWR | O_CREAT | O_EXCL, 0600), 0);
	ck_assert_int_eq(statfs(scratch, &fs), 0);
	uc_file(path("o.npy"));
	ck_assert_uint_gt(uc_resident(path("o.npy")), 0);
	mk_io_uncache_replaced(path("o.npy"), tmp);
	uc_same(path("o.npy"));
	if (fs.f_type != UC_TMPFS) /* uc_same read it back in: ask again */
		ck_assert_uint_eq((mk_io_uncache_replaced(path("o.npy"), tmp),
				   uc_resident(path("o.npy"))), 0);

	/* a second link: the file outlives the rename, its pages stay */
	snprintf(linked, sizeof linked, "%s", path("linked.npy"));
	snprintf(other, sizeof other, "%s", path("other-name.npy"));
	uc_file(linked);
	ck_assert_int_eq(link(linked, other), 0);
	mk_io_uncache_replaced(linked, tmp);
	ck_assert_uint_eq(uc_resident(linked), UC_BYTES / (size_t)sysconf(_SC_PAGESIZE));
	uc_same(other);

	/* a FIFO with no writer: not opened at all (alarm: a hang fails) */
	ck_assert_int_eq(mkfifo(path("pipe"), 0600), 0);
	alarm(10);
	mk_io_uncache_replaced(path("pipe"), tmp);
	alarm(0);
	mk_io_uncache_replaced(path("missing.npy"), tmp); /* nothing there */
	close(tmp);
}
END_TEST

/* Descriptors this process has open. */
static int uc_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int k = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		k++;
	closedir(d);
	return k;
}

static int uc_write_new(const char *tmp, void *arg)
{
	(void)arg;
	put_file(tmp, "new\n", 4);
	return MK_OK;
}

static int uc_write_fail(const char *tmp, void *arg)
{
	(void)tmp;
	(void)arg;
	return mk_error_set(MK_EIO, "the writer failed");
}

START_TEST(replaced_file_handle_is_closed)
{
	int before, now = -1;
	char got[8] = "";
	FILE *f;

	uc_file(path("big.bin")); /* UC_BYTES: large enough to be held */
	before = uc_open_fds();
	ck_assert_int_eq(mk_io_atomic(path("big.bin"), uc_write_fail, NULL), MK_EIO);
	ck_assert_int_eq(uc_open_fds(), before); /* held only once the data is safe */
	uc_same(path("big.bin"));
	ck_assert_int_eq(mk_io_atomic(path("big.bin"), uc_write_new, NULL), MK_OK);
	ck_assert_ptr_nonnull(f = fopen(path("big.bin"), "rb"));
	ck_assert_uint_eq(fread(got, 1, sizeof got, f), 4);
	fclose(f);
	ck_assert_str_eq(got, "new\n");
	/* the close runs on a thread of its own: give it up to 10 s (the
	 * case's timeout is 30) */
	for (int k = 0; k < 1000 && (now = uc_open_fds()) != before; k++)
		usleep(10000);
	ck_assert_int_eq(now, before);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uncache");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, drops_the_replaced_file_only);
	tcase_add_test(tc, replaced_file_handle_is_closed);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
