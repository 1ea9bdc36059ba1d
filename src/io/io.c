/*
 * Mask files: format names, atomic writes, rows written in a format (the
 * expression writer, src/expr/expr_write.c, streams an expression's rows
 * here) and the dispatch from the public mk_mask_load to the per-format
 * code in io_*.c.
 */
/* realpath() is an X/Open extension, not in the POSIX base we build for. */
#define _XOPEN_SOURCE 700
#include "config.h"
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tensor.h"
#include "internal.h"
#include "flusher.h"

static const struct {
	const char *name;
	mk_format format;
} mk_format_names[] = {
	{"txt", MK_FMT_TXT},   {"json", MK_FMT_JSON}, {"png", MK_FMT_PNG},
	{"h5", MK_FMT_H5},     {"hdf5", MK_FMT_H5},   {"npy", MK_FMT_NPY},
	{"blocks", MK_FMT_BLOCKS}, {"flex", MK_FMT_FLEX},  {"npz", MK_FMT_FLEX},
	{"flex-py", MK_FMT_FLEX_PY}, {"py", MK_FMT_FLEX_PY},
};

#define MK_NFORMAT_NAMES (sizeof mk_format_names / sizeof mk_format_names[0])

mk_format mk_format_from_name(const char *name)
{
	if (!name)
		return MK_FMT_NONE;
	for (size_t k = 0; k < MK_NFORMAT_NAMES; k++)
		if (strcasecmp(name, mk_format_names[k].name) == 0)
			return mk_format_names[k].format;
	return MK_FMT_NONE;
}

mk_format mk_format_from_path(const char *path)
{
	const char *dot, *slash;
	mk_format f;

	if (!path)
		return MK_FMT_NONE;
	dot = strrchr(path, '.');
	slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash) || dot == path || dot[-1] == '/')
		return MK_FMT_NONE;
	f = mk_format_from_name(dot + 1);
	/* A block layout is JSON on disk; ".blocks" is not an extension we own,
	 * nor ".flex": a FlexAttention layout is a .npz. */
	if (f == MK_FMT_BLOCKS || (f == MK_FMT_FLEX && strcasecmp(dot + 1, "npz") != 0) ||
	    (f == MK_FMT_FLEX_PY && strcasecmp(dot + 1, "py") != 0))
		return MK_FMT_NONE;
	return f;
}

const char *mk_format_name(mk_format f)
{
	for (size_t k = 0; k < MK_NFORMAT_NAMES; k++)
		if (mk_format_names[k].format == f)
			return mk_format_names[k].name;
	return "none";
}

/* ---- opening inputs ----------------------------------------------------- */

static const char *mk_input_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "is a directory";
	if (S_ISFIFO(m))
		return "not a regular file (a FIFO)";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "not a regular file (a device)";
	if (S_ISSOCK(m))
		return "not a regular file (a socket)";
	return "not a regular file";
}

int mk_input_open(const char *path, void **file)
{
	FILE **out = (FILE **)file;
	struct stat st;
	int fd, flags;

	*out = NULL;
	/* O_NONBLOCK: opening a FIFO that no one writes to returns at once */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return mk_error_errno(errno, "'%s'", path);
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return mk_error_errno(err, "'%s'", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return mk_error_set(MK_EIO, "'%s': %s", path, mk_input_kind(st.st_mode));
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (!(*out = fdopen(fd, "rb"))) {
		int err = errno;
		close(fd);
		return mk_error_errno(err, "'%s'", path);
	}
	return MK_OK;
}

int mk_input_check(const char *path)
{
	void *f;
	int ret = mk_input_open(path, &f);
	if (ret == MK_OK)
		fclose(f);
	return ret;
}

int mk_file_read(const char *path, uint64_t max_bytes, const char *what, unsigned flags,
		 char **buf, size_t *len)
{
	struct stat st;
	const char *nul;
	FILE *f;
	int ret;

	*buf = NULL;
	*len = 0;
	if ((ret = mk_input_open(path, (void **)&f))) {
		mk_error_file(path);
		return ret;
	}
	if (fstat(fileno(f), &st) != 0) {
		ret = mk_error_errno(errno, "'%s'", path);
		goto cleanup;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		*len = (size_t)st.st_size; /* for a caller whose limit is not in bytes */
		ret = mk_error_set(MK_ERANGE, "'%s': %" PRIu64 " bytes is too large for %s (at most "
				   "%" PRIu64 ")", path, (uint64_t)st.st_size, what, max_bytes);
		goto cleanup;
	}
	if (!(*buf = malloc((size_t)st.st_size + 1))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for '%s'", path);
		goto cleanup;
	}
	*len = fread(*buf, 1, (size_t)st.st_size, f);
	if (*len != (size_t)st.st_size) {
		ret = mk_error_set(MK_ESYS, "'%s': read failed: %s", path,
				   ferror(f) ? strerror(errno) : "file shrank while reading");
		goto cleanup;
	}
	(*buf)[*len] = '\0';
	if ((flags & MK_FILE_TEXT) && (nul = memchr(*buf, '\0', *len)))
		ret = mk_error_set(MK_EFORMAT, "'%s': a NUL byte at offset %zu in %s", path,
				   (size_t)(nul - *buf), what);
cleanup:
	fclose(f);
	if (ret) {
		free(*buf);
		*buf = NULL;
		if (ret != MK_ERANGE)
			*len = 0;
		mk_error_file(path);
	}
	return ret;
}

/* ---- atomic writes ------------------------------------------------------ */

/* mkstemp creates files 0600; a mask file should get the permissions any
 * other new file would (0666 less the umask), or keep those of the file it
 * replaces.  umask() can only be read by setting it, so there is a window of
 * a few instructions in which another thread would create files with umask
 * 0; the library creates files nowhere else. */
static mode_t mk_io_new_mode(const struct stat *old, bool exists)
{
	mode_t mask;
	if (exists)
		return old->st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* After rename() the new name lives in the directory; syncing the directory
 * makes it survive a crash too.  Best effort: some file systems refuse. */
static void mk_io_sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else if ((size_t)(slash - path) < sizeof dir)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	else
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return;
	(void)fsync(fd);
	close(fd);
}

/* Creates PATH.tmp.XXXXXX beside target with the permissions the result
 * should have. */
static int mk_io_mktemp(const char *path, const char *target, const struct stat *st,
			bool exists, char **tmp, int *fd)
{
	size_t len = strlen(target) + sizeof ".tmp.XXXXXX";

	*tmp = malloc(len);
	if (!*tmp)
		return mk_error_set(MK_ENOMEM, "out of memory");
	snprintf(*tmp, len, "%s.tmp.XXXXXX", target);
	*fd = mkstemp(*tmp);
	if (*fd < 0) {
		free(*tmp);
		*tmp = NULL;
		return mk_error_errno(errno, "'%s': cannot create a temporary file beside it", path);
	}
	(void)fchmod(*fd, mk_io_new_mode(st, exists));
	return MK_OK;
}

/* Writers know only the temporary path, and size checks know no file at
 * all; an expression may name several files, so say which one failed. */
int mk_io_name_error(int ret, const char *path)
{
	if (ret == MK_OK)
		return ret;
	if (!strstr(mk_error(), path))
		mk_error_prefix("'%s': ", path);
	mk_error_file(path);
	return ret;
}

/* *out: the file a chain of symbolic links ends at, which need not exist
 * yet (malloc'ed): writing to a link writes to that file, as the shell's
 * '>' does, whether it exists or not. */
static int mk_io_follow(const char *path, char **out)
{
	char *cur = strdup(path), buf[PATH_MAX];
	struct stat st;

	*out = NULL;
	for (int level = 0; cur; level++) {
		const char *slash;
		char *next = NULL;
		ssize_t len;

		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
			*out = cur;
			return MK_OK;
		}
		if (level == 40 || (len = readlink(cur, buf, sizeof buf - 1)) < 0) {
			free(cur);
			return mk_error_errno(level == 40 ? ELOOP : errno, "'%s'", path);
		}
		buf[len] = '\0';
		slash = strrchr(cur, '/');
		if (buf[0] == '/' || !slash) {
			next = strdup(buf);
		} else if ((next = malloc((size_t)(slash - cur) + 2 + (size_t)len))) {
			memcpy(next, cur, (size_t)(slash - cur) + 1);
			memcpy(next + (slash - cur) + 1, buf, (size_t)len + 1);
		}
		free(cur);
		cur = next;
	}
	return mk_error_set(MK_ENOMEM, "out of memory");
}

/* The rename that replaces a file frees its pages and blocks when nothing
 * else holds it: for `maskkit attn`'s 8 MiB output over the last one, 2.7
 * ms (perf trace), most of it the blocks (1.7 ms with the pages dropped
 * first, ext4 mounted with discard; tmpfs 1.1 ms).  A handle held across
 * the rename leaves that to its close, which a thread of its own does while
 * the caller goes on (the program's teardown: unmapping its inputs, 1.3
 * ms): the time outside the kernel went from 10.6 to 9.2 ms and from 10.9
 * to 9.0 (medians of 30 and 16 alternating runs).  Small files are freed
 * at once; a file that cannot be opened is freed by the rename. */
#define MK_IO_HOLD_MIN ((off_t)1 << 20)

static int mk_io_hold_replaced(const char *target, const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || st->st_nlink != 1 || st->st_size < MK_IO_HOLD_MIN)
		return -1;
	/* not blocking: it may have become a FIFO since */
	return open(target, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

int mk_io_atomic_raw(const char *path,
			    int (*writer)(const char *tmp_path, void *arg), void *arg)
{
	char *resolved = NULL, *tmp = NULL;
	const char *target = path;
	struct stat st;
	bool exists;
	int fd = -1, held = -1, err, ret, token = -1;

	assert(path && writer);
	/* A device or FIFO (/dev/null, a pipe, /dev/stdout): write in place,
	 * since renaming over it would replace the device node. Asked of the
	 * kernel through every link first: /dev/stdout ends at /proc/self/fd/1,
	 * whose target ("pipe:[123]") is no path a readlink walk can follow. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return writer(path, arg);
	/* Renaming over a symbolic link would replace the link, not the file
	 * it points to (or would point to). */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if ((ret = mk_io_follow(path, &resolved)))
			return ret;
		target = resolved;
	}
	exists = stat(target, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		ret = mk_error_set(MK_EIO, "'%s': is a directory", path);
		goto out;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		/* became a device between the two looks: still in place */
		ret = writer(target, arg);
		goto out;
	}
	ret = mk_io_mktemp(path, target, &st, exists, &tmp, &fd);
	/* a signal now removes the temporary file (mk_cleanup_run) */
	if (ret == MK_OK)
		token = mk_cleanup_push_file(tmp);
	if (ret == MK_OK)
		ret = writer(tmp, arg);
	if (ret)
		goto out;
	/* The writer has closed its own handle; ours is the same inode. */
	err = fsync(fd) != 0 ? errno : 0;
	if (close(fd) != 0 && !err)
		err = errno;
	fd = -1;
	if (err) {
		ret = mk_error_errno(err, "'%s'", path);
		goto out;
	}
	held = exists ? mk_io_hold_replaced(target, &st) : -1;
	if (rename(tmp, target) != 0) {
		ret = mk_error_errno(errno, "'%s': cannot rename the temporary file over it", path);
		goto out;
	}
	/* the directory first: synced while the freeing runs, it waited for
	 * it (2.6 ms rather than 0.25) */
	mk_io_sync_dir(target);
	if (held >= 0)
		mk_close_detached(held);
	held = -1;
out:
	if (held >= 0)
		close(held);
	if (fd >= 0)
		close(fd);
	if (ret && tmp)
		unlink(tmp);
	mk_cleanup_pop(token);
	free(tmp);
	free(resolved);
	return ret;
}

void mk_io_uncache_replaced(const char *path, int tmp_fd)
{
	struct stat st, fst, tst;
	int fd;

	/* a device or FIFO is written in place, a file with another link
	 * lives on after the rename, and one on another device than the
	 * temporary file (a bind mount, a lower layer of overlayfs) is not
	 * what the rename replaces: their pages are not ours to drop */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    fstat(tmp_fd, &tst) != 0 || tst.st_dev != st.st_dev)
		return;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &fst) == 0 && fst.st_dev == st.st_dev && fst.st_ino == st.st_ino)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

int mk_io_atomic(const char *path,
		 int (*writer)(const char *tmp_path, void *arg), void *arg)
{
	return mk_io_name_error(mk_io_atomic_raw(path, writer, arg), path);
}

/* ---- writing rows ------------------------------------------------------ */

typedef int (*mk_stream_writer)(const mk_rows *r, FILE *f, const mk_write_opts *o);

static mk_stream_writer mk_io_stream_writer(mk_format f)
{
	switch (f) {
	case MK_FMT_TXT: return mk_io_write_txt;
	case MK_FMT_JSON: return mk_io_write_json;
	case MK_FMT_PNG: return mk_io_write_png;
	case MK_FMT_NPY: return mk_io_write_npy;
	case MK_FMT_BLOCKS: return mk_io_write_blocks;
	case MK_FMT_FLEX: return mk_io_write_flex;
	default: return NULL;
	}
}

struct mk_io_job {
	const mk_rows *rows;
	const mk_write_opts *opts;
	mk_format format;
};

static int mk_io_write_tmp(const char *tmp_path, void *arg)
{
	const struct mk_io_job *job = arg;
	FILE *f;
	int ret;

	if (job->format == MK_FMT_H5)
		return mk_io_write_h5(job->rows, tmp_path, job->opts);
	f = fopen(tmp_path, "wb");
	if (!f)
		return mk_error_errno(errno, "cannot open for writing");
	ret = mk_io_stream_writer(job->format)(job->rows, f, job->opts);
	if (ret == MK_OK && (fflush(f) != 0 || ferror(f)))
		ret = mk_error_errno(errno, "write failed");
	if (fclose(f) != 0 && ret == MK_OK)
		ret = mk_error_errno(errno, "write failed");
	return ret;
}

int mk_io_write_rows(const mk_rows *rows, const char *path, mk_format format,
		     const mk_write_opts *o)
{
	struct mk_io_job job = {.rows = rows, .opts = o, .format = format};

	if (format != MK_FMT_H5 && !mk_io_stream_writer(format))
		return mk_error_set(MK_EINVAL, "unknown output format %d", (int)format);
	return mk_io_atomic(path, mk_io_write_tmp, &job);
}

int mk_io_write_rows_stream(const mk_rows *rows, FILE *f, const mk_write_opts *o)
{
	mk_stream_writer writer;
	int ret;

	if (o->format == MK_FMT_H5)
		return mk_error_set(MK_EINVAL, "HDF5 output needs a file name, not a stream");
	if (!(writer = mk_io_stream_writer(o->format)))
		return mk_error_set(MK_EINVAL, "no output format given for the stream");
	ret = writer(rows, f, o);
	if (ret == MK_OK && (fflush(f) != 0 || ferror(f)))
		ret = mk_error_errno(errno, "write failed");
	return ret;
}

struct mk_io_text_job {
	int (*write)(void *file, void *arg);
	void *arg;
};

static int mk_io_write_text_tmp(const char *tmp_path, void *arg)
{
	const struct mk_io_text_job *job = arg;
	FILE *f = fopen(tmp_path, "w");
	int ret;

	if (!f)
		return mk_error_errno(errno, "cannot open for writing");
	ret = job->write(f, job->arg);
	if (ret == MK_OK && (fflush(f) != 0 || ferror(f)))
		ret = mk_error_errno(errno, "write failed");
	if (fclose(f) != 0 && ret == MK_OK)
		ret = mk_error_errno(errno, "write failed");
	return ret;
}

int mk_write_atomic(const char *path, int (*write)(void *file, void *arg), void *arg)
{
	struct mk_io_text_job job = {.write = write, .arg = arg};
	return mk_io_atomic(path, mk_io_write_text_tmp, &job);
}

/* ---- reading ------------------------------------------------------------ */

static int mk_io_read(const char *path, uint64_t max_memory, mk_mask **out)
{
	/* FILE.h5:/dataset: an HDF5 file whatever follows the colon */
	if (path[mk_tensor_file_len(path)] == ':')
		return mk_io_read_h5(path, max_memory, out);
	switch (mk_format_from_path(path)) {
	case MK_FMT_TXT: return mk_io_read_txt(path, max_memory, out);
	case MK_FMT_JSON: return mk_io_read_json(path, max_memory, out);
	case MK_FMT_H5: return mk_io_read_h5(path, max_memory, out);
	case MK_FMT_NPY: return mk_io_read_npy(path, max_memory, out);
	case MK_FMT_FLEX: return mk_io_read_flex(path, max_memory, out);
	case MK_FMT_PNG:
		return mk_error_set(MK_EINVAL, "'%s': PNG pictures cannot be read back as masks "
				    "(use .txt, .json, .h5, .npy or .npz)", path);
	case MK_FMT_FLEX_PY:
		return mk_error_set(MK_EINVAL, "'%s': a mask_mod (flex-py) cannot be read back as "
				    "a mask (use .txt, .json, .h5, .npy or .npz)", path);
	default:
		return mk_error_set(MK_EINVAL, "'%s': unknown mask file type "
				    "(use .txt, .json, .h5, .npy or .npz)", path);
	}
}

int mk_mask_load(const char *path, uint64_t max_memory, mk_mask **out)
{
	assert(path && out);
	*out = NULL;
	return mk_io_name_error(mk_io_read(path, max_memory, out), path);
}
