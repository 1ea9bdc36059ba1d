/*
 * HDF5 files written through a file driver of our own, so that a failed
 * write cannot leave libhdf5 broken.
 *
 * libhdf5 1.10 (Debian 12 has 1.10.8) frees a file's structures when
 * closing it fails (H5F__dest: the final flush of the metadata cache fails
 * on a full disk) but keeps its identifier, and closing a dataset that
 * cannot be flushed can leave the dataset's the same way.  At exit its
 * atexit handler closes those identifiers again, through freed memory: the
 * process dies with SIGSEGV after it printed a clean error (HDF5 GitHub
 * #2257, fixed upstream by #2291 in 2023).  Nothing can be done about such
 * an identifier once it exists: H5Idec_ref, H5Fclose again or H5close would
 * all close it again, and H5Iclear_type refuses library types.  So no close
 * may fail for want of disk space:
 *
 * - Writes go through this driver, a POSIX one like libhdf5's "sec2" (pread,
 *   pwrite, ftruncate), which records the errno of the first failure.
 * - Outside mk_h5w_close a failed write fails the HDF5 call that made it
 *   (H5Dwrite, H5Dcreate...), which libhdf5 survives: it keeps what it could
 *   not write and returns an error.
 * - After a failure, and for every failure while mk_h5w_close runs, writes
 *   report success and write nothing: the file is lost anyway (the callers
 *   write a temporary file that is removed on error), and libhdf5 can close
 *   every object cleanly.  mk_h5w_close then returns the recorded reason.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "h5write.h"
#include "h5util.h"

#define MK_H5W_MAXADDR (((haddr_t)1 << 62) - 1) /* within off_t on any 64-bit system */
#define MK_H5W_IO_MAX ((size_t)1 << 30)         /* bytes in one pread/pwrite */

/* The driver's part of the file access property list: where to record. */
struct mk_h5w_fapl {
	mk_h5w *w;
};

struct mk_h5w_file {
	H5FD_t pub; /* first: libhdf5 fills it in */
	mk_h5w *w;
	int fd;
	bool regular;
	dev_t dev;
	ino_t ino;
	haddr_t eoa, eof;
};

static herr_t mk_h5w_fail(struct mk_h5w_file *f, int err)
{
	if (!f->w->err)
		f->w->err = err ? err : EIO;
	return f->w->closing ? 0 : -1;
}

static H5FD_t *mk_h5w_fd_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
	const struct mk_h5w_fapl *info = H5Pget_driver_info(fapl);
	int oflags = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
	struct mk_h5w_file *f;
	struct stat st;
	int fd;

	(void)maxaddr;
	if (!info || !info->w)
		return NULL;
	oflags |= (flags & H5F_ACC_TRUNC ? O_TRUNC : 0) | (flags & H5F_ACC_CREAT ? O_CREAT : 0) |
		  (flags & H5F_ACC_EXCL ? O_EXCL : 0) | O_CLOEXEC;
	if ((fd = open(name, oflags, 0666)) < 0) {
		info->w->open_err = errno;
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !(f = calloc(1, sizeof *f))) {
		info->w->open_err = errno ? errno : ENOMEM;
		close(fd);
		return NULL;
	}
	*f = (struct mk_h5w_file){.w = info->w, .fd = fd, .regular = S_ISREG(st.st_mode),
				  .dev = st.st_dev, .ino = st.st_ino, .eof = (haddr_t)st.st_size};
	info->w->open_err = 0;
	return &f->pub;
}

/* Always succeeds: a close that fails would break libhdf5 (see the top). */
static herr_t mk_h5w_fd_close(H5FD_t *file)
{
	struct mk_h5w_file *f = (struct mk_h5w_file *)file;
	mk_h5w *w = f->w;
	int fd = f->fd;

	free(f);
	if (close(fd) != 0 && !w->err)
		w->err = errno;
	return 0;
}

static int mk_h5w_fd_cmp(const H5FD_t *a, const H5FD_t *b)
{
	const struct mk_h5w_file *x = (const struct mk_h5w_file *)a;
	const struct mk_h5w_file *y = (const struct mk_h5w_file *)b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static herr_t mk_h5w_fd_query(const H5FD_t *file, unsigned long *flags)
{
	(void)file;
	if (flags)
		*flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA |
			 H5FD_FEAT_DATA_SIEVE | H5FD_FEAT_AGGREGATE_SMALLDATA;
	return 0;
}

static haddr_t mk_h5w_fd_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
	(void)type;
	return ((const struct mk_h5w_file *)file)->eoa;
}

static herr_t mk_h5w_fd_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
	(void)type;
	((struct mk_h5w_file *)file)->eoa = addr;
	return 0;
}

static haddr_t mk_h5w_fd_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
	(void)type;
	return ((const struct mk_h5w_file *)file)->eof;
}

static herr_t mk_h5w_fd_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
	(void)fapl;
	*handle = &((struct mk_h5w_file *)file)->fd;
	return 0;
}

static bool mk_h5w_region_ok(haddr_t addr, size_t size)
{
	return addr <= MK_H5W_MAXADDR && (haddr_t)size <= MK_H5W_MAXADDR - addr;
}

/* Past the end of the file reads zeros, as in libhdf5's own drivers.  While
 * closing, a failed read also gives zeros rather than fail the close. */
static herr_t mk_h5w_fd_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr,
			     size_t size, void *buf)
{
	struct mk_h5w_file *f = (struct mk_h5w_file *)file;
	unsigned char *p = buf;

	(void)type;
	(void)dxpl;
	if (!mk_h5w_region_ok(addr, size))
		return -1;
	while (size > 0) {
		ssize_t got = pread(f->fd, p, size < MK_H5W_IO_MAX ? size : MK_H5W_IO_MAX,
				    (off_t)addr);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && mk_h5w_fail(f, errno) < 0)
			return -1;
		if (got <= 0) {
			memset(p, 0, size);
			break;
		}
		p += got;
		addr += (haddr_t)got;
		size -= (size_t)got;
	}
	return 0;
}

static herr_t mk_h5w_fd_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr,
			      size_t size, const void *buf)
{
	struct mk_h5w_file *f = (struct mk_h5w_file *)file;
	const unsigned char *p = buf;

	(void)type;
	(void)dxpl;
	if (f->w->err) /* the file is lost: let libhdf5 finish and close */
		return 0;
	if (!mk_h5w_region_ok(addr, size))
		return mk_h5w_fail(f, EFBIG);
	while (size > 0) {
		ssize_t put = pwrite(f->fd, p, size < MK_H5W_IO_MAX ? size : MK_H5W_IO_MAX,
				     (off_t)addr);
		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return mk_h5w_fail(f, put < 0 ? errno : EIO);
		p += put;
		addr += (haddr_t)put;
		size -= (size_t)put;
	}
	if (addr > f->eof)
		f->eof = addr;
	return 0;
}

/* The file must end where libhdf5's data ends: its last allocation may not
 * have been written.  Not for a device, which has no size to set. */
static herr_t mk_h5w_fd_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
	struct mk_h5w_file *f = (struct mk_h5w_file *)file;

	(void)dxpl;
	(void)closing;
	if (f->eoa == f->eof || !f->regular || f->w->err)
		return 0;
	if (ftruncate(f->fd, (off_t)f->eoa) != 0)
		return mk_h5w_fail(f, errno);
	f->eof = f->eoa;
	return 0;
}

static const H5FD_class_t mk_h5w_class = {
#ifdef H5FD_CLASS_VERSION /* libhdf5 1.14 */
	.version = H5FD_CLASS_VERSION,
	.value = (H5FD_class_value_t)461, /* in the range left to users, 256..511 */
#endif
	.name = "maskkit",
	.maxaddr = MK_H5W_MAXADDR,
	.fc_degree = H5F_CLOSE_STRONG,
	.fapl_size = sizeof(struct mk_h5w_fapl),
	.open = mk_h5w_fd_open,
	.close = mk_h5w_fd_close,
	.cmp = mk_h5w_fd_cmp,
	.query = mk_h5w_fd_query,
	.get_eoa = mk_h5w_fd_get_eoa,
	.set_eoa = mk_h5w_fd_set_eoa,
	.get_eof = mk_h5w_fd_get_eof,
	.get_handle = mk_h5w_fd_get_handle,
	.read = mk_h5w_fd_read,
	.write = mk_h5w_fd_write,
	.truncate = mk_h5w_fd_truncate,
	.fl_map = H5FD_FLMAP_DICHOTOMY,
};

/* The driver's id: registered once, again after libhdf5 was closed (its
 * number may then name another driver, hence the name compared). */
static hid_t mk_h5w_driver(void)
{
	static hid_t id = H5I_INVALID_HID;
	const H5FD_class_t *c;

	if (id >= 0 && H5Iis_valid(id) > 0 && H5Iget_type(id) == H5I_VFL &&
	    (c = H5Iobject_verify(id, H5I_VFL)) && c->name && !strcmp(c->name, mk_h5w_class.name))
		return id;
	return id = H5FDregister(&mk_h5w_class);
}

/* A file access list for w: this driver, and a strong close degree, so
 * that closing the file closes whatever object of it is still open. */
static hid_t mk_h5w_fapl(mk_h5w *w)
{
	struct mk_h5w_fapl info = {.w = w};
	hid_t driver = mk_h5w_driver(), fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl >= 0 && (driver < 0 || H5Pset_driver(fapl, driver, &info) < 0 ||
			  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0)) {
		H5Pclose(fapl);
		fapl = H5I_INVALID_HID;
	}
	return fapl;
}

static int mk_h5w_start(mk_h5w *w, const char *path, bool create)
{
	hid_t fapl;
	int ret;

	*w = (mk_h5w){.file = H5I_INVALID_HID};
	if ((ret = mk_h5_silence()))
		return ret;
	if ((fapl = mk_h5w_fapl(w)) < 0)
		return mk_error_set(MK_EINTERNAL, "HDF5 cannot set up its file driver");
	if (create)
		w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	else
		w->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
	H5Pclose(fapl);
	if (w->file >= 0)
		return MK_OK;
	if (w->open_err)
		return mk_error_errno(w->open_err, "cannot %s the file", create ? "create" : "open");
	if (w->err) /* libhdf5 cleans up after a failed open itself: no identifier */
		return mk_error_errno(w->err, "write failed");
	return create ? mk_error_set(MK_ESYS, "HDF5 cannot create the file")
		      : mk_error_set(MK_EFORMAT, "HDF5 cannot open the file for writing "
				     "(damaged, or written by another file driver?)");
}

int mk_h5w_create(mk_h5w *w, const char *path)
{
	return mk_h5w_start(w, path, true);
}

int mk_h5w_open(mk_h5w *w, const char *path)
{
	return mk_h5w_start(w, path, false);
}

/* ret, or the OS's reason when a write failed (see h5write.h). */
static int mk_h5w_status(const mk_h5w *w, int ret)
{
	char what[400];

	if (!w->err)
		return ret;
	snprintf(what, sizeof what, "%s", ret ? mk_error() : "write failed");
	return mk_error_errno(w->err, "%s", what);
}

/* Objects of the file the caller left open (H5Fclose would close them too,
 * by the strong degree; closing them here first keeps the order defined). */
static void mk_h5w_close_objects(hid_t file)
{
	ssize_t count = H5Fget_obj_count(file, H5F_OBJ_LOCAL | H5F_OBJ_DATASET | H5F_OBJ_GROUP |
					 H5F_OBJ_DATATYPE | H5F_OBJ_ATTR);
	hid_t *ids;

	if (count <= 0 || !(ids = malloc((size_t)count * sizeof *ids)))
		return;
	count = H5Fget_obj_ids(file, H5F_OBJ_LOCAL | H5F_OBJ_DATASET | H5F_OBJ_GROUP |
			       H5F_OBJ_DATATYPE | H5F_OBJ_ATTR, (size_t)count, ids);
	for (ssize_t k = 0; k < count; k++) {
		if (H5Iget_type(ids[k]) == H5I_ATTR)
			H5Aclose(ids[k]);
		else
			H5Oclose(ids[k]);
	}
	free(ids);
}

int mk_h5w_close(mk_h5w *w, int ret)
{
	if (w->file < 0)
		return ret;
	w->closing = true;
	mk_h5w_close_objects(w->file);
	if (H5Fclose(w->file) < 0 && ret == MK_OK && !w->err)
		ret = mk_error_set(MK_EINTERNAL, "HDF5 cannot close the file");
	w->file = H5I_INVALID_HID;
	return mk_h5w_status(w, ret);
}

hid_t mk_h5_type_f16(void)
{
	hid_t t = H5Tcopy(H5T_IEEE_F32LE);

	/* sign bit 15, exponent bits 10..14, fraction bits 0..9, bias 15 */
	if (t >= 0 && (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 ||
		       H5Tset_ebias(t, 15) < 0)) {
		H5Tclose(t);
		t = H5I_INVALID_HID;
	}
	return t;
}
