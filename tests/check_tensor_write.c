/* Unit tests of tensor files (tensor_write.c, flusher.c), writing: atomic
 * writes that keep the old file on failure, and tensors written a part at
 * a time as they are made.  Reading: check_tensor.c. */
#include "config.h"
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "scratchutil.h"
#include "testutil.h"

static const int64_t dims4[4] = {2, 3, 5, 4};

START_TEST(failed_writes_keep_the_old_file)
{
	mk_tensor t;
	FILE *f;
	char buf[16] = {0};
	mk_test_tensor(2, dims4 + 2, MK_DTYPE_F32, &t);
	f = fopen(path("old.h5"), "w");
	fputs("sentinel\n", f);
	fclose(f);
	/* not HDF5: refused rather than replaced by a new file */
	ck_assert_int_eq(mk_tensor_write(&t, path("old.h5:/x"), NULL, MK_DTYPE_F32), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "is not an HDF5 file"));
	/* the root group exists: HDF5 cannot create a dataset there */
	ck_assert_int_eq(mk_tensor_write(&t, path("new.h5:/"), NULL, MK_DTYPE_F32), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "cannot create dataset '/'"));
	ck_assert_int_eq(mk_tensor_write(&t, path("nodir/x.npy"), NULL, MK_DTYPE_F32), MK_EIO);
	ck_assert_int_eq(mk_tensor_write(&t, path("x.txt"), NULL, MK_DTYPE_F32), MK_EINVAL);
	f = fopen(path("old.h5"), "r");
	ck_assert_uint_eq(fread(buf, 1, sizeof buf - 1, f), 9);
	fclose(f);
	ck_assert_str_eq(buf, "sentinel\n");
	ck_assert_int_eq(scratch_walk(false), 1);
	mk_tensor_release(&t);
}
END_TEST

/* mk_tensor_write_parts: a producer that makes `step` elements a call (the
 * formula of make_tensor; the first half said final through the sink),
 * failing on call `fail` (0: never) or making no progress on call `stall`. */
struct parts {
	mk_tensor *t;
	uint64_t step;
	int calls, fail, stall;
};

static int parts_produce(void *arg, mk_tensor_sink *sink, uint64_t *ready)
{
	struct parts *p = arg;
	uint64_t count = mk_tensor_count(p->t), end = *ready + p->step;

	if (++p->calls == p->fail)
		return mk_error_set(MK_EINVAL, "the producer failed on call %d", p->calls);
	if (p->calls == p->stall)
		return MK_OK;
	end = end < count ? end : count;
	for (uint64_t e = *ready; e < end; e++) {
		p->t->data[e] = (float)e * 0.25f - 3.0f;
		if (e == (*ready + end) / 2)
			mk_tensor_sink_ready(sink, e + 1);
	}
	*ready = end;
	return MK_OK;
}

/* Writes spec from a producer of step elements a call, reads it back and
 * compares with mk_test_tensor's tensor; then removes the file. */
static void parts_round_trip(const char *spec, const char *file, mk_dtype dtype, uint64_t step)
{
	mk_tensor want, got, t;
	struct parts p = {.t = &t, .step = step};

	mk_test_tensor(4, dims4, dtype, &want);
	ck_assert_int_eq(mk_tensor_new(4, dims4, dtype, 0, "test", &t), MK_OK);
	ck_assert_msg(mk_tensor_write_parts(&t, spec, "O", dtype, parts_produce, &p) == MK_OK,
		      "%s", mk_error());
	ck_assert_int_eq(p.calls, (int)((mk_tensor_count(&t) + step - 1) / step));
	ck_assert_msg(mk_tensor_read(spec, 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(got.dtype, dtype);
	ck_assert_mem_eq(got.dims, want.dims, sizeof dims4);
	ck_assert_mem_eq(got.data, want.data, mk_tensor_count(&want) * sizeof(float));
	mk_tensor_release(&want);
	mk_tensor_release(&got);
	mk_tensor_release(&t);
	ck_assert_int_eq(scratch_walk(false), 1); /* no temporary file left */
	ck_assert_int_eq(unlink(path(file)), 0);
}

START_TEST(parts_are_written_as_made)
{
	/* 120 elements: one call, parts that divide it, and a short last part */
	for (uint64_t step = 1; step <= 120; step = step * 3 + 1) {
		parts_round_trip(path("p.npy"), "p.npy", MK_DTYPE_F32, step);
		parts_round_trip(path("p.npy"), "p.npy", MK_DTYPE_F64, step);
	}
	parts_round_trip(path("p.h5"), "p.h5", MK_DTYPE_F32, 7);
	parts_round_trip(path("p.h5"), "p.h5", MK_DTYPE_F64, 50);
}
END_TEST

/* A failing producer: its own status and message, not the file's; the old
 * file kept, no temporary file left. */
START_TEST(parts_failures_write_nothing)
{
	const char *specs[] = {"q.npy", "q.h5"};
	mk_tensor t;

	ck_assert_int_eq(mk_tensor_new(4, dims4, MK_DTYPE_F32, 0, "test", &t), MK_OK);
	for (int k = 0; k < 2; k++) {
		struct parts p = {.t = &t, .step = 16, .fail = 3};
		FILE *f = fopen(path("keep.npy"), "w");
		ck_assert_ptr_nonnull(f);
		fputs("old\n", f);
		fclose(f);
		ck_assert_int_eq(mk_tensor_write_parts(&t, path(specs[k]), "O", MK_DTYPE_F32,
						       parts_produce, &p), MK_EINVAL);
		ck_assert_str_eq(mk_error(), "the producer failed on call 3");
		ck_assert_ptr_null(mk_error_get()->file);
		p = (struct parts){.t = &t, .step = 16, .fail = 2};
		ck_assert_int_eq(mk_tensor_write_parts(&t, path("keep.npy"), "O", MK_DTYPE_F32,
						       parts_produce, &p), MK_EINVAL);
		p = (struct parts){.t = &t, .step = 16, .stall = 2};
		ck_assert_int_eq(mk_tensor_write_parts(&t, path(specs[k]), "O", MK_DTYPE_F32,
						       parts_produce, &p), MK_EINTERNAL);
		ck_assert_int_eq(scratch_walk(false), 1); /* keep.npy only */
		f = fopen(path("keep.npy"), "r");
		ck_assert_int_eq(fgetc(f), 'o');
		fclose(f);
	}
	/* a file's own failure still names it */
	struct parts p = {.t = &t, .step = 16};
	ck_assert_int_eq(mk_tensor_write_parts(&t, path("nodir/x.npy"), "O", MK_DTYPE_F32,
					       parts_produce, &p), MK_EIO);
	ck_assert_ptr_nonnull(strstr(mk_error(), "nodir/x.npy"));
	mk_tensor_release(&t);
}
END_TEST

/* A write that fails in the flusher's thread (flusher.c) past a file size
 * limit: MK_ESYS with the OS's reason, no file left; in a child, since the
 * limit is the process's. */
START_TEST(parts_write_failure_reported)
{
	const int64_t dims[2] = {1024, 1024}; /* 4 MiB */
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit lim = {1 << 20, 1 << 20};
		mk_tensor t;
		struct parts p = {.t = &t, .step = 1 << 18};
		int ret;
		signal(SIGXFSZ, SIG_IGN);
		if (mk_tensor_new(2, dims, MK_DTYPE_F32, 0, "test", &t) || setrlimit(RLIMIT_FSIZE, &lim))
			_exit(44);
		ret = mk_tensor_write_parts(&t, path("big.npy"), "O", MK_DTYPE_F32, parts_produce, &p);
		_exit(ret == MK_ESYS && strstr(mk_error(), "File too large") && scratch_walk(false) == 0
		      ? 42 : 43);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 42, "child status %d", status);
}
END_TEST

static Suite *tensor_write_suite(void)
{
	Suite *s = suite_create("tensor_write");
	TCase *tc = tcase_create("files");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, failed_writes_keep_the_old_file);
	tcase_add_test(tc, parts_are_written_as_made);
	tcase_add_test(tc, parts_failures_write_nothing);
	tcase_add_test(tc, parts_write_failure_reported);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(tensor_write_suite());
}
