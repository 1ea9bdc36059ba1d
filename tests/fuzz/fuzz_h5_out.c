/*
 * libFuzzer target: writing a tensor to FILE.h5:/dataset (mk_tensor_write)
 * when FILE.h5 already exists.  The input is one byte L (mod 64), L bytes of
 * dataset name (none: FILE.h5, the default dataset "O"), then the bytes of
 * the existing file (empty: no file to keep).  Checked:
 * - a failed write leaves a one-line message, the file byte for byte as it
 *   was and no temporary file;
 * - a write that succeeds reads back equal, and every dataset the file held
 *   before is still there, but the one the name replaced.
 * Linked with h5_asan.c (see there).
 */
#include "config.h"
#include <dirent.h>
#include <hdf5.h>
#include <string.h>
#include <unistd.h>
#include "maskkit.h"
#include "h5util.h"
#include "fuzz.h"

#define FUZZ_NAME_MAX 64
#define FUZZ_ROWS 3
#define FUZZ_COLS 2

/* Every dataset of the file (NULL when it does not open as HDF5); *gone[k]
 * is set for those that are the object at `target`, which the write may
 * replace.  Reads only: libhdf5 is the one that may crash on a corrupt file
 * (see README.md). */
static char **fuzz_list(const char *path, const char *target, bool **gone, size_t *count)
{
	hid_t file, t = H5I_INVALID_HID, o;
	char **names = NULL;

	*gone = NULL;
	*count = 0;
	if (mk_h5_silence())
		return NULL;
	if (H5Fis_hdf5(path) <= 0 || mk_h5_open(path, &file) != MK_OK)
		return NULL;
	if (mk_h5_datasets(file, path, 0, NULL, NULL, &names, count) == MK_OK &&
	    (*gone = calloc(*count + 1, sizeof **gone))) {
		if (H5Lexists(file, target, H5P_DEFAULT) > 0)
			t = H5Oopen(file, target, H5P_DEFAULT);
		for (size_t k = 0; t >= 0 && k < *count; k++)
			if ((o = H5Oopen(file, names[k], H5P_DEFAULT)) >= 0) {
				(*gone)[k] = mk_h5_same_object(o, t);
				H5Oclose(o);
			}
		if (t >= 0)
			H5Oclose(t);
	}
	H5Fclose(file);
	return names;
}

static bool fuzz_listed(char **names, const char *name)
{
	for (; names && *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

/* No PATH.tmp.XXXXXX left beside the file. */
static void fuzz_check_no_tmp(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[600];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	MK_FUZZ_CHECK((d = opendir(dir)) != NULL, "cannot list '%s'", dir);
	while ((e = readdir(d)))
		MK_FUZZ_CHECK(!strstr(e->d_name, ".tmp."), "a temporary file was left: %s",
			      e->d_name);
	closedir(d);
}

static void fuzz_check_unchanged(const char *path, const uint8_t *data, size_t size)
{
	uint8_t *now = malloc(size + 1);
	FILE *f = fopen(path, "rb");
	size_t got = f && now ? fread(now, 1, size + 1, f) : 0;

	MK_FUZZ_CHECK(f && now, "cannot read '%s' back", path);
	MK_FUZZ_CHECK(got == size && !memcmp(now, data, size),
		      "a failed write changed the file (%zu bytes, was %zu): %s", got, size,
		      mk_error());
	fclose(f);
	free(now);
}

static void fuzz_check_written(const char *spec, const mk_tensor *t, char **before,
			       const bool *gone, size_t count, const char *path)
{
	mk_tensor back = {0};
	bool *gone_after;
	size_t n_after;
	char **after;
	int ret = mk_tensor_read(spec, MK_FUZZ_MAX_MEMORY, &back);

	MK_FUZZ_CHECK(ret == MK_OK, "the dataset written does not read back: %s", mk_error());
	MK_FUZZ_CHECK(back.rank == 2 && back.dims[0] == FUZZ_ROWS && back.dims[1] == FUZZ_COLS &&
		      !memcmp(back.data, t->data, sizeof(float) * FUZZ_ROWS * FUZZ_COLS),
		      "'%s' reads back different", spec);
	mk_tensor_release(&back);
	after = fuzz_list(path, "/", &gone_after, &n_after);
	for (size_t k = 0; k < count; k++)
		MK_FUZZ_CHECK(gone[k] || fuzz_listed(after, before[k]),
			      "writing '%s' lost the dataset '%s'", spec, before[k]);
	mk_h5_names_free(after);
	free(gone_after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size ? data[0] % FUZZ_NAME_MAX : 0, count = 0;
	char name[FUZZ_NAME_MAX + 1], spec[800], target[FUZZ_NAME_MAX + 2];
	float values[FUZZ_ROWS * FUZZ_COLS];
	mk_tensor t = {.rank = 2, .dims = {FUZZ_ROWS, FUZZ_COLS}, .dtype = MK_DTYPE_F32,
		       .data = values};
	const uint8_t *bytes;
	const char *path;
	bool *gone = NULL;
	char **before;
	int ret;

	if (len + 1 > size)
		len = size ? size - 1 : 0;
	memcpy(name, data + (size ? 1 : 0), len);
	name[len] = '\0'; /* a NUL in the name ends it, as on a command line */
	bytes = data + (size ? 1 + len : 0);
	path = mk_fuzz_input(bytes, size ? size - 1 - len : 0, ".h5");
	snprintf(spec, sizeof spec, "%s:%s", path, name[0] ? name : "O");
	snprintf(target, sizeof target, "%s", name[0] ? name : "O");
	for (int k = 0; k < FUZZ_ROWS * FUZZ_COLS; k++)
		values[k] = (float)(size + (size_t)k) * 0.25f - 1.0f;
	before = fuzz_list(path, target, &gone, &count);
	/* "in.h5" with the default name, or "in.h5:NAME" */
	ret = mk_tensor_write(&t, name[0] ? spec : path, "O", MK_DTYPE_F32);
	if (ret) {
		mk_fuzz_check_error(ret, "mk_tensor_write");
		fuzz_check_unchanged(path, bytes, size ? size - 1 - len : 0);
	} else {
		fuzz_check_written(spec, &t, before, gone, count, path);
	}
	fuzz_check_no_tmp(path);
	mk_h5_names_free(before);
	free(gone);
	unlink(path);
	return 0;
}
