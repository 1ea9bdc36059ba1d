/*
 * libFuzzer target: the HDF5 weights reader (mk_weights_*).  Each input is
 * opened as a weights file, its datasets are listed (any rank and 2-D), the
 * listed ones read as matrices, and mk_weights_find is asked for needles
 * taken from the listing.  Checked beyond "no crash, no leak, no UB":
 *
 * - listings are NULL-terminated, sorted, absolute paths, and the 2-D
 *   listing is part of the full one (or of a second full one: libhdf5 can
 *   answer differently when a corrupt file is walked again);
 * - a read gives rows, cols >= 1 within MK_FUZZ_MAX_MEMORY and only finite
 *   values (the same again for the first 2-D dataset by its path without
 *   the leading '/'), or fails with the matrix zeroed;
 * - find succeeds exactly when one 2-D dataset contains the needle, and
 *   gives that one (by the earlier 2-D listing or a fresh one);
 * - every error leaves a one-line message that fits mk_error()'s buffer.
 *
 * Linked with h5_asan.c: libhdf5 mallocs the sizes a corrupt file claims.
 */
#include "config.h"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "fuzz.h"

/* Datasets read and needles searched per input: each costs a walk or a
 * read in libhdf5, which is not fast. */
#define MK_FUZZ_MAX_READS 16
#define MK_FUZZ_MAX_FINDS 4

static void mk_fuzz_check_list(int ret, char **list, size_t count, const char *what)
{
	if (ret != MK_OK) {
		MK_FUZZ_CHECK(list == NULL && count == 0, "a failed %s listing returned names",
			      what);
		mk_fuzz_check_error(ret, "mk_weights_list");
		return;
	}
	MK_FUZZ_CHECK(list != NULL, "MK_OK without a %s listing", what);
	MK_FUZZ_CHECK(list[count] == NULL, "the %s listing of %zu names is not NULL-terminated",
		      what, count);
	for (size_t k = 0; k < count; k++) {
		MK_FUZZ_CHECK(list[k][0] == '/', "listed '%s' without a leading '/'", list[k]);
		MK_FUZZ_CHECK(k == 0 || strcmp(list[k - 1], list[k]) <= 0,
			      "the %s listing has '%s' before '%s'", what, list[k - 1], list[k]);
	}
}

static int mk_fuzz_compare(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* Reads name and checks the result; the matrix is the caller's on MK_OK. */
static int mk_fuzz_read(mk_weights *w, const char *name, int rank, mk_matrix *m)
{
	int ret = mk_weights_read(w, name, rank, MK_FUZZ_MAX_MEMORY, m);
	int64_t total;

	if (ret != MK_OK) {
		MK_FUZZ_CHECK(m->data == NULL && m->rows == 0 && m->cols == 0,
			      "a failed read of '%s' left a matrix", name);
		mk_fuzz_check_error(ret, "mk_weights_read");
		return ret;
	}
	MK_FUZZ_CHECK(m->rows >= 1 && m->cols >= 1 && m->data != NULL,
		      "'%s' read as %lld x %lld", name, (long long)m->rows, (long long)m->cols);
	MK_FUZZ_CHECK(rank == 2 || m->rows == 1, "1-D '%s' read with %lld rows", name,
		      (long long)m->rows);
	MK_FUZZ_CHECK((uint64_t)m->rows <= MK_FUZZ_MAX_MEMORY / sizeof(double) / (uint64_t)m->cols,
		      "'%s' read as %lld x %lld, over max_memory", name, (long long)m->rows,
		      (long long)m->cols);
	total = m->rows * m->cols;
	for (int64_t k = 0; k < total; k++)
		MK_FUZZ_CHECK(isfinite(m->data[k]), "'%s' read with %g at %lld", name, m->data[k],
			      (long long)k);
	return MK_OK;
}

static void mk_fuzz_read_once(mk_weights *w, const char *name, int rank)
{
	mk_matrix m;

	if (mk_fuzz_read(w, name, rank, &m) == MK_OK)
		mk_matrix_release(&m);
	MK_FUZZ_CHECK(m.data == NULL && m.rows == 0, "mk_matrix_release left a matrix");
}

/* The dataset read twice, once by its path without the leading '/', which
 * the reader must take the same way. */
static void mk_fuzz_read_twice(mk_weights *w, const char *name, int rank)
{
	mk_matrix a, b;

	if (mk_fuzz_read(w, name, rank, &a) != MK_OK)
		return;
	MK_FUZZ_CHECK(mk_fuzz_read(w, name + 1, rank, &b) == MK_OK,
		      "'%s' reads, '%s' does not: %s", name, name + 1, mk_error());
	MK_FUZZ_CHECK(a.rows == b.rows && a.cols == b.cols &&
			      !memcmp(a.data, b.data, (size_t)(a.rows * a.cols) * sizeof(double)),
		      "'%s' and '%s' read differently", name, name + 1);
	mk_matrix_release(&a);
	mk_matrix_release(&b);
}

/* Whether find's outcome, status ret and path, is what a 2-D listing says:
 * success exactly when one listed path contains the needle, and that path. */
static bool mk_fuzz_find_agrees(int ret, const char *path, const char *needle, char **list2,
				size_t count2)
{
	const char *match = NULL;
	size_t matches = 0;

	for (size_t k = 0; k < count2; k++)
		if (strstr(list2[k], needle)) {
			match = list2[k];
			matches++;
		}
	if (ret != MK_OK)
		return matches != 1 || ret == MK_ENOMEM;
	return matches == 1 && !strcmp(path, match);
}

/* libhdf5 can answer differently when a corrupt file is walked again (an
 * object it failed to open on one walk opens on the next), so a finding is
 * a find that disagrees with both the earlier listing and a fresh one. */
static void mk_fuzz_find(mk_weights *w, const char *needle, char **list2, size_t count2)
{
	char **again = NULL, *path = NULL;
	size_t count = 0;
	int ret;

	ret = mk_weights_find(w, needle, "the fuzzed dataset", &path);
	if (ret != MK_OK) {
		MK_FUZZ_CHECK(path == NULL, "a failed find of '%s' returned '%s'", needle, path);
		mk_fuzz_check_error(ret, "mk_weights_find");
	} else {
		MK_FUZZ_CHECK(path && strstr(path, needle), "find '%s' gave '%s'", needle,
			      path ? path : "(null)");
	}
	if (!mk_fuzz_find_agrees(ret, path, needle, list2, count2) &&
	    mk_weights_list(w, 2, NULL, &again, &count) == MK_OK)
		MK_FUZZ_CHECK(mk_fuzz_find_agrees(ret, path, needle, again, count),
			      "find '%s' gave %s, which no listing of the 2-D datasets agrees with",
			      needle, path ? path : mk_error());
	mk_weights_list_free(again);
	free(path);
}

static bool mk_fuzz_listed(char **list, size_t count, const char *name)
{
	return list && bsearch(name, list, count, sizeof *list, mk_fuzz_compare);
}

/* Every 2-D dataset is in the full listing, or (see mk_fuzz_find) in a
 * fresh one. */
static void mk_fuzz_check_subset(mk_weights *w, char **list2, size_t count2, char **all,
				 size_t count)
{
	char **again = NULL;
	size_t count_again = 0;

	for (size_t k = 0; k < count2; k++) {
		if (mk_fuzz_listed(all, count, list2[k]))
			continue;
		if (!again && mk_weights_list(w, 0, NULL, &again, &count_again) != MK_OK)
			break;
		MK_FUZZ_CHECK(mk_fuzz_listed(again, count_again, list2[k]),
			      "2-D '%s' is missing from two full listings", list2[k]);
	}
	mk_weights_list_free(again);
}

/* The last step of a path: a needle find should resolve unless another
 * dataset shares it. */
static const char *mk_fuzz_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void mk_fuzz_weights(mk_weights *w, const char *file)
{
	char **all = NULL, **list2 = NULL;
	size_t count = 0, count2 = 0;
	int ret;

	MK_FUZZ_CHECK(!strcmp(mk_weights_file(w), file), "mk_weights_file gave '%s'",
		      mk_weights_file(w));
	ret = mk_weights_list(w, 0, NULL, &all, &count);
	mk_fuzz_check_list(ret, all, count, "full");
	ret = mk_weights_list(w, 2, NULL, &list2, &count2);
	mk_fuzz_check_list(ret, list2, count2, "2-D");
	mk_fuzz_check_subset(w, list2, count2, all, count);
	if (count2 > 0)
		mk_fuzz_read_twice(w, list2[0], 2);
	for (size_t k = 1; k < count2 && k < MK_FUZZ_MAX_READS; k++)
		mk_fuzz_read_once(w, list2[k], 2);
	for (size_t k = 0; k < count && k < MK_FUZZ_MAX_READS; k++)
		mk_fuzz_read_once(w, all[k], 1);
	if (list2) {
		mk_fuzz_find(w, "", list2, count2);
		for (size_t k = 0; k < count2 && k < MK_FUZZ_MAX_FINDS; k++)
			mk_fuzz_find(w, mk_fuzz_base(list2[k]), list2, count2);
	}
	mk_weights_list_free(list2);
	mk_weights_list_free(all);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *file = mk_fuzz_input(data, size, ".h5");
	mk_weights *w = NULL;
	int ret;

	ret = mk_weights_open(file, &w);
	if (ret != MK_OK) {
		MK_FUZZ_CHECK(w == NULL, "a failed open returned a handle");
		mk_fuzz_check_error(ret, "mk_weights_open");
		return 0;
	}
	mk_fuzz_weights(w, file);
	mk_weights_close(w);
	return 0;
}
