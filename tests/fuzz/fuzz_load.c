/*
 * The file-reader targets' common part: each input becomes a file in a
 * private temporary directory (made once per process, so parallel fuzzers
 * never share one).  For the mask readers it is loaded with mk_mask_load,
 * and a mask that loads is written back in the same format and loaded
 * again, which must give the same mask.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "maskkit.h"
#include "fuzz.h"

/* Round trips write n x n cells: keep them cheap so the fuzzer stays fast. */
#define MK_FUZZ_ROUNDTRIP_MAX_N 256

static char mk_fuzz_dir[512];

static void mk_fuzz_cleanup(void)
{
	static const char *const names[] = {"in.json", "in.npy", "in.txt", "in.h5",
					    "out.json", "out.npy", "out.txt", "out.h5"};
	char path[600];

	if (!mk_fuzz_dir[0])
		return;
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		snprintf(path, sizeof path, "%s/%s", mk_fuzz_dir, names[k]);
		unlink(path);
	}
	rmdir(mk_fuzz_dir);
}

/* tmpfs when there is one: the writers fsync every file they make. */
static const char *mk_fuzz_tmp_base(void)
{
	const char *env = getenv("TMPDIR");
	struct stat st;

	if (env && *env)
		return env;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(mk_fuzz_dir, sizeof mk_fuzz_dir, "%s/maskkit-fuzz-XXXXXX", mk_fuzz_tmp_base());
	if (!mkdtemp(mk_fuzz_dir)) {
		fprintf(stderr, "fuzz: cannot create a directory '%s': %s\n", mk_fuzz_dir,
			strerror(errno));
		abort();
	}
	atexit(mk_fuzz_cleanup);
	return 0;
}

const char *mk_fuzz_input(const uint8_t *data, size_t size, const char *ext)
{
	static char path[600];
	FILE *f;

	snprintf(path, sizeof path, "%s/in%s", mk_fuzz_dir, ext);
	f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		fprintf(stderr, "fuzz: cannot write '%s': %s\n", path, strerror(errno));
		abort();
	}
	return path;
}

void mk_fuzz_check_error(int status, const char *call)
{
	const char *msg = mk_error();
	size_t len = strlen(msg);

	MK_FUZZ_CHECK(status < 0, "%s returned status %d", call, status);
	MK_FUZZ_CHECK(len > 0, "%s: status %d without a message", call, status);
	MK_FUZZ_CHECK(len < MK_FUZZ_MAX_MESSAGE, "%s: a message of %zu bytes", call, len);
	MK_FUZZ_CHECK(!strchr(msg, '\n'), "%s: a message of more than one line: %s", call, msg);
}

/* in -> out in the same format -> a second load equal to the first. */
static void mk_fuzz_roundtrip(const char *in, const mk_mask *m, const char *ext)
{
	mk_write_opts wo = {.format = MK_FMT_NONE, .max_memory = MK_FUZZ_MAX_MEMORY};
	mk_bind_opts bo = {.n = 0, .max_memory = MK_FUZZ_MAX_MEMORY};
	mk_mask *back = NULL;
	mk_expr *e = NULL;
	char out[600];
	int ret;

	snprintf(out, sizeof out, "%s/out%s", mk_fuzz_dir, ext);
	ret = mk_expr_file(in, &e);
	MK_FUZZ_CHECK(ret == MK_OK, "mk_expr_file: %s", mk_error());
	ret = mk_expr_bind(e, &bo);
	MK_FUZZ_CHECK(ret == MK_OK, "a file that loaded does not bind: %s", mk_error());
	MK_FUZZ_CHECK(mk_expr_n(e) == mk_mask_n(m), "bound n %lld, loaded n %lld",
		      (long long)mk_expr_n(e), (long long)mk_mask_n(m));
	ret = mk_write_expr(e, out, &wo);
	MK_FUZZ_CHECK(ret == MK_OK, "writing a loaded mask back fails: %s", mk_error());
	ret = mk_mask_load(out, MK_FUZZ_MAX_MEMORY, &back);
	MK_FUZZ_CHECK(ret == MK_OK, "a mask maskkit wrote does not load: %s", mk_error());
	MK_FUZZ_CHECK(mk_mask_equal(m, back), "the mask changed in a %s round trip", ext);
	mk_mask_free(back);
	mk_expr_free(e);
	unlink(out);
}

int mk_fuzz_load(const uint8_t *data, size_t size, const char *ext)
{
	const char *in = mk_fuzz_input(data, size, ext);
	mk_mask *m = NULL;
	int ret;

	ret = mk_mask_load(in, MK_FUZZ_MAX_MEMORY, &m);
	if (ret == MK_OK) {
		MK_FUZZ_CHECK(m != NULL, "MK_OK without a mask");
		if (mk_mask_n(m) <= MK_FUZZ_ROUNDTRIP_MAX_N)
			mk_fuzz_roundtrip(in, m, ext);
	} else {
		MK_FUZZ_CHECK(m == NULL, "a failed load returned a mask");
		mk_fuzz_check_error(ret, "mk_mask_load");
	}
	mk_mask_free(m);
	unlink(in);
	return 0;
}
