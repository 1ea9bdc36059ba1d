/*
 * Writing tensors (tensor.c reads them): a .npy file, or one dataset of an
 * HDF5 file, always through a temporary file renamed over the target.
 *
 * FILE.h5 and FILE.h5:/path name a dataset, not a whole file: when FILE.h5
 * exists, the dataset is added to it or replaces the dataset of that name,
 * and every other dataset, group and attribute is kept.  The temporary file
 * starts as a byte copy of FILE.h5, which is opened read-write, the old link
 * removed and the dataset written, so that a failure at any point leaves
 * FILE.h5 as it was.  A byte copy rather than H5Ocopy of every object into a
 * new file: it keeps what H5Ocopy would change or lose (hard links shared
 * between groups, the root group's attributes, the file's format versions,
 * user block and space settings), at the cost of not reclaiming the space of
 * a replaced dataset (h5repack does that).  An existing FILE.h5 that is not
 * HDF5 is refused rather than replaced, and so is replacing a group; the
 * copy is read back before it replaces FILE.h5 (see tensor_h5_verify).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tensor.h"
#include "h5util.h"
#include "h5write.h"
#include "flusher.h"
#include "internal.h"

#define TENSOR_CHUNK 4096            /* elements converted per step */
#define TENSOR_COPY_BYTES (64 << 10) /* bytes per read when copying a file */

struct tensor_job {
	const mk_tensor *t;
	const char *dataset; /* HDF5 only */
	const char *base;    /* HDF5: the existing file the dataset goes into, or NULL */
	mk_format format;
	mk_dtype dtype;
	mk_tensor_produce produce; /* .npy: the data made as it is written, or NULL */
	void *arg;
	bool produce_failed;       /* its error is the producer's, not the file's */
	const char *dest;          /* the file the write replaces (not the temporary one) */
};

/* ---- .npy ------------------------------------------------------------------- */

/* Elements x[0 .. count) as dtype; MK_ESYS with errno on failure. */
static int tensor_npy_put(FILE *f, const float *x, uint64_t count, mk_dtype dtype)
{
	double buf[TENSOR_CHUNK];

	if (dtype == MK_DTYPE_F32)
		return fwrite(x, sizeof(float), (size_t)count, f) == count ? MK_OK : MK_ESYS;
	for (uint64_t e = 0; e < count;) {
		size_t k = count - e < TENSOR_CHUNK ? (size_t)(count - e) : TENSOR_CHUNK;
		for (size_t j = 0; j < k; j++)
			buf[j] = x[e + j];
		if (fwrite(buf, sizeof *buf, k, f) != k)
			return MK_ESYS;
		e += k;
	}
	return MK_OK;
}

/* Hands each part the producer makes to the flusher (flusher.c), which
 * writes it and makes it durable while the next part is made: the fsync
 * that ends the atomic write then waits for the last part only.  float64
 * (converted on the way) and a flusher that cannot start: written here. */
struct mk_tensor_sink {
	mk_flusher *fl; /* NULL: the parts are written as the producer returns them */
};

void mk_tensor_sink_ready(mk_tensor_sink *sink, uint64_t ready)
{
	/* a failed write is reported by mk_flusher_stop, at the end */
	if (sink && sink->fl)
		(void)mk_flusher_hand(sink->fl, (size_t)ready * sizeof(float));
}

static int tensor_npy_parts(struct tensor_job *job, FILE *f, uint64_t *done)
{
	uint64_t count = mk_tensor_count(job->t), ready = *done;
	mk_flusher *fl = NULL;
	mk_tensor_sink sink = {NULL};
	int ret = MK_OK, err, saved;

	if (job->dtype == MK_DTYPE_F32 && fflush(f) == 0)
		fl = mk_flusher_start(fileno(f), job->t->data);
	sink.fl = fl;
	/* The pages of the file the rename will replace are dropped before
	 * the first part is made rather than after the last: the memory the
	 * producer then touches first (`maskkit attn`'s O and packed K and V)
	 * and this file's own cache get the pages just freed, where fresh ones
	 * cost a fault in the host of a virtual machine that takes free memory
	 * back (bench/first_touch.py).  `maskkit attn` at n = 4096, d = 64,
	 * 8 heads over its last output, five sets of 40-60 alternating runs:
	 * the kernel 2.2, 2.8, 0.1, 2.6 and 2.9 ms faster (of 185), the whole
	 * process 2.0, 3.2, -1.4, 1.7 and 1.2 ms (medians); the dropping
	 * itself takes 0.6 ms here.  It also lightens the freeing the rename
	 * leaves to a thread (mk_io_atomic_raw): a held 8 MiB file closed in
	 * 2.56 ms with its pages cached, 1.7 without.  A producer that fails
	 * leaves the old file whole, only out of the cache. */
	if (fl && job->dest)
		mk_io_uncache_replaced(job->dest, fileno(f));
	while (*done < count) {
		if ((ret = job->produce(job->arg, &sink, &ready))) {
			job->produce_failed = true;
			break;
		}
		if (ready <= *done || ready > count) {
			ret = mk_error_set(MK_EINTERNAL, "a tensor's producer made no progress "
					   "(%" PRIu64 " of %" PRIu64 " elements)", ready, count);
			break;
		}
		if (fl) {
			/* a write that failed ends the making: mk_flusher_stop
			 * reports it below */
			if (mk_flusher_hand(fl, (size_t)ready * sizeof(float)))
				break;
		} else if (tensor_npy_put(f, job->t->data + *done, ready - *done, job->dtype)) {
			ret = MK_ESYS;
			break;
		}
		*done = ready;
	}
	saved = errno; /* a failed write's, for the caller's message */
	if (fl && (err = mk_flusher_stop(fl)) && ret == MK_OK) {
		errno = err;
		return MK_ESYS;
	}
	errno = saved;
	return ret;
}

static int tensor_write_npy(struct tensor_job *job, const char *tmp)
{
	const mk_tensor *t = job->t;
	bool big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	mk_dtype dtype = job->dtype;
	const char *descr = dtype == MK_DTYPE_F64 ? (big ? ">f8" : "<f8") : (big ? ">f4" : "<f4");
	char head[256];
	size_t hlen = mk_npy_header(descr, t->rank, t->dims, head, sizeof head);
	FILE *f = fopen(tmp, "wb");
	uint64_t done = 0;
	int ret = MK_OK, err = 0;

	if (!f)
		return mk_error_errno(errno, "cannot open for writing");
	if (hlen == 0 || fwrite(head, 1, hlen, f) != hlen)
		ret = MK_ESYS;
	if (ret == MK_OK && job->produce)
		ret = tensor_npy_parts(job, f, &done);
	else if (ret == MK_OK)
		ret = tensor_npy_put(f, t->data, mk_tensor_count(t), dtype);
	if (job->produce_failed || (ret && ret != MK_ESYS)) { /* its own message */
		fclose(f);
		return ret;
	}
	if (ret)
		err = errno;
	if ((fflush(f) != 0 || ferror(f)) && ret == MK_OK) {
		ret = MK_ESYS;
		err = errno;
	}
	if (fclose(f) != 0 && ret == MK_OK) {
		ret = MK_ESYS;
		err = errno;
	}
	return ret ? mk_error_errno(err ? err : EIO, "write failed") : MK_OK;
}

/* ---- HDF5 ------------------------------------------------------------------- */

/* True when every group on the way to name exists and so does name (an
 * HDF5 name: H5Lexists fails rather than answer for a missing group). */
static bool tensor_h5_exists(hid_t file, const char *name)
{
	size_t len = strlen(name);
	char *prefix = malloc(len + 1);
	bool ok = prefix != NULL;

	for (size_t k = 1; ok && k <= len; k++) {
		if (k < len && name[k] != '/')
			continue;
		memcpy(prefix, name, k);
		prefix[k] = '\0';
		if (strspn(prefix, "/") < k)
			ok = H5Lexists(file, prefix, H5P_DEFAULT) > 0;
	}
	free(prefix);
	return ok;
}

/* Makes way for the dataset `name` in an existing file: a dataset there is
 * unlinked, and so is a soft or external link; a group (and all it holds)
 * or a named datatype is kept, and the write refused. */
static int tensor_h5_make_way(hid_t file, const char *name)
{
	H5L_info_t link;
	H5I_type_t type;
	hid_t obj;

	if (!tensor_h5_exists(file, name))
		return MK_OK;
	if (H5Lget_info(file, name, &link, H5P_DEFAULT) < 0)
		return mk_error_set(MK_EINVAL, "'%s' cannot be replaced (the root group, or a "
				    "damaged link)", name);
	if (link.type == H5L_TYPE_HARD) {
		if ((obj = H5Oopen(file, name, H5P_DEFAULT)) < 0)
			return mk_error_set(MK_EFORMAT, "cannot open the object '%s' to replace it",
					    name);
		type = H5Iget_type(obj);
		H5Oclose(obj);
		if (type != H5I_DATASET)
			return mk_error_set(MK_EINVAL, "'%s' is a %s in the file, not a dataset: not "
					    "replacing it (name a dataset)", name,
					    type == H5I_GROUP ? "group" : "named datatype");
	}
	if (H5Ldelete(file, name, H5P_DEFAULT) < 0)
		return mk_error_set(MK_ESYS, "HDF5 cannot unlink the old '%s'", name);
	return MK_OK;
}

/* Copies the file at `from` into the (empty) temporary file at `to`. */
static int tensor_copy_file(const char *from, const char *to)
{
	char *buf = malloc(TENSOR_COPY_BYTES);
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, ret = MK_OK;
	ssize_t got = 0, put;

	if (!buf)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (in < 0)
		ret = mk_error_errno(errno, "cannot read the existing file");
	else if ((out = open(to, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		ret = mk_error_errno(errno, "cannot open the temporary file");
	while (ret == MK_OK && (got = read(in, buf, TENSOR_COPY_BYTES)) != 0) {
		if (got < 0 && errno != EINTR)
			ret = mk_error_errno(errno, "cannot read the existing file");
		for (ssize_t done = 0; ret == MK_OK && got > 0 && done < got; done += put)
			if ((put = write(out, buf + done, (size_t)(got - done))) < 0 && errno == EINTR)
				put = 0;
			else if (put <= 0)
				ret = mk_error_errno(put < 0 ? errno : EIO, "write failed");
	}
	if (out >= 0 && close(out) != 0 && ret == MK_OK)
		ret = mk_error_errno(errno, "write failed");
	if (in >= 0)
		close(in);
	free(buf);
	return ret;
}

/* The number of names of `before` missing from `after` (both sorted). */
static size_t tensor_names_missing(char **before, size_t nb, char **after, size_t na)
{
	size_t missing = 0, a = 0;

	for (size_t b = 0; b < nb; b++) {
		while (a < na && strcmp(after[a], before[b]) < 0)
			a++;
		missing += a == na || strcmp(after[a], before[b]) != 0;
	}
	return missing;
}

/* libhdf5 trusts the file it is given: into a damaged one (a changed field
 * of its superblock, say) it can write a file that it cannot read back,
 * every call succeeding.  So the copy is read back before it replaces the
 * original: the new dataset must open with its shape, and of the datasets
 * listed before (NULL: the listing failed, not checked) at most one, the
 * one replaced, may be gone. */
static int tensor_h5_verify(const char *tmp, const mk_tensor *t, const char *name,
			    char **before, size_t nb)
{
	hsize_t dims[MK_TENSOR_MAX_RANK];
	hid_t file = H5I_INVALID_HID, dset = H5I_INVALID_HID, space = H5I_INVALID_HID;
	char **after = NULL;
	size_t na = 0;
	bool ok = mk_h5_open(tmp, &file) == MK_OK && tensor_h5_exists(file, name) &&
		  (dset = H5Dopen2(file, name, H5P_DEFAULT)) >= 0 &&
		  (space = H5Dget_space(dset)) >= 0 &&
		  H5Sget_simple_extent_ndims(space) == t->rank &&
		  H5Sget_simple_extent_dims(space, dims, NULL) == t->rank;

	for (int k = 0; ok && k < t->rank; k++)
		ok = dims[k] == (hsize_t)t->dims[k];
	if (ok && before)
		ok = mk_h5_datasets(file, tmp, 0, NULL, NULL, &after, &na) == MK_OK &&
		     tensor_names_missing(before, nb, after, na) <= 1;
	mk_h5_names_free(after);
	if (space >= 0)
		H5Sclose(space);
	if (dset >= 0)
		H5Dclose(dset);
	if (file >= 0)
		H5Fclose(file);
	return ok ? MK_OK : mk_error_set(MK_EFORMAT, "the file is damaged: with '%s' added, "
					 "HDF5 cannot read it back (left as it was)", name);
}


/* Large tensors (attn-derive's indicators: 15 MB of 0/1 floats for 200
 * sentences) are stored chunked, shuffled and deflated, chunks of at most
 * TW_CHUNK elements taken from the last axes; small ones contiguous, as
 * before.  H5P_DEFAULT, a new list, or H5I_INVALID_HID. */
#define TW_DEFLATE_MIN ((uint64_t)1 << 18)
#define TW_CHUNK ((hsize_t)1 << 18)
static hid_t tensor_h5_dcpl(int rank, const hsize_t *dims)
{
	hsize_t chunk[MK_TENSOR_MAX_RANK], budget = TW_CHUNK;
	uint64_t count = 1;
	hid_t dcpl;

	for (int k = 0; k < rank; k++)
		count *= dims[k];
	if (count < TW_DEFLATE_MIN || !mk_h5_have_deflate())
		return H5P_DEFAULT;
	for (int k = rank; k-- > 0;) {
		chunk[k] = dims[k] < budget ? dims[k] : budget > 1 ? budget : 1;
		budget = budget / chunk[k] ? budget / chunk[k] : 1;
	}
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (dcpl >= 0 && (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
			  H5Pset_deflate(dcpl, 1) < 0)) {
		H5Pclose(dcpl);
		dcpl = H5I_INVALID_HID;
	}
	return dcpl;
}

static int tensor_write_h5(const struct tensor_job *job, const char *tmp)
{
	const mk_tensor *t = job->t;
	hsize_t dims[MK_TENSOR_MAX_RANK];
	hid_t lcpl = H5I_INVALID_HID, space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, dset;
	mk_h5w w = {.file = H5I_INVALID_HID};
	char **before = NULL;
	size_t nb = 0;
	int ret = job->base ? tensor_copy_file(job->base, tmp) : MK_OK;

	for (int k = 0; k < t->rank; k++)
		dims[k] = (hsize_t)t->dims[k];
	if (ret == MK_OK)
		ret = job->base ? mk_h5w_open(&w, tmp) : mk_h5w_create(&w, tmp);
	if (ret == MK_OK && job->base &&
	    mk_h5_datasets(w.file, job->base, 0, NULL, NULL, &before, &nb) != MK_OK)
		before = NULL; /* a loop or too many links: not checked afterwards */
	if (ret == MK_OK && job->base)
		ret = tensor_h5_make_way(w.file, job->dataset);
	if (ret == MK_OK && ((lcpl = H5Pcreate(H5P_LINK_CREATE)) < 0 ||
			     H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
			     (space = H5Screate_simple(t->rank, dims, NULL)) < 0))
		ret = mk_error_set(MK_ESYS, "HDF5 cannot describe the dataset");
	if (ret == MK_OK && (dcpl = tensor_h5_dcpl(t->rank, dims)) < 0)
		ret = mk_error_set(MK_ESYS, "HDF5 cannot describe the dataset");
	if (ret == MK_OK &&
	    (dset = H5Dcreate2(w.file, job->dataset, job->dtype == MK_DTYPE_F64 ? H5T_IEEE_F64LE
			       : H5T_IEEE_F32LE, space, lcpl, dcpl, H5P_DEFAULT)) < 0)
		ret = mk_error_set(MK_EINVAL, "HDF5 cannot create dataset '%s'", job->dataset);
	if (dcpl >= 0 && dcpl != H5P_DEFAULT)
		H5Pclose(dcpl);
	if (ret == MK_OK && H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
				     t->data) < 0)
		ret = mk_error_set(MK_ESYS, "HDF5 write failed");
	if (space >= 0)
		H5Sclose(space);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	ret = mk_h5w_close(&w, ret); /* closes dset too */
	if (ret == MK_OK && job->base)
		ret = tensor_h5_verify(tmp, t, job->dataset, before, nb);
	mk_h5_names_free(before);
	return ret;
}

static int tensor_write_tmp(const char *tmp, void *arg)
{
	struct tensor_job *job = arg;
	if (job->format == MK_FMT_H5)
		return tensor_write_h5(job, tmp);
	return tensor_write_npy(job, tmp);
}

/* The little-endian address of `size` bytes at p; UINT64_MAX when all its
 * bits are set (HDF5's undefined address) or it does not fit. */
static uint64_t tensor_sb_addr(const unsigned char *p, unsigned size)
{
	uint64_t a = 0;
	bool undefined = true;

	for (unsigned k = size; k-- > 0;) {
		undefined = undefined && p[k] == 0xff;
		if (k >= 8 && p[k])
			return UINT64_MAX;
		if (k < 8)
			a |= (uint64_t)p[k] << (8 * k);
	}
	return undefined ? UINT64_MAX : a;
}

/* libhdf5 writes back at close what a version 0 or 1 superblock (which has
 * no checksum) points to, the driver information block, without checking
 * the address when it reads it: one past the end of the file makes the
 * close fail, which libhdf5 1.10 does not survive (see h5write.c).  So such
 * a superblock is refused before the file is opened for writing. */
static int tensor_h5_check_superblock(const char *path)
{
	static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
	unsigned char sb[64] = {0};
	uint64_t at = 0, eof, free_space, driver;
	FILE *f = fopen(path, "rb");
	bool ok = true;
	unsigned s;

	if (!f)
		return mk_error_errno(errno, "'%s': cannot read the existing file", path);
	/* the superblock is at 0, 512, 1024, 2048... (after a user block) */
	for (; fseek(f, (long)at, SEEK_SET) == 0 && fread(sb, 1, sizeof sb, f) > sizeof sig;
	     at = at ? 2 * at : 512)
		if (!memcmp(sb, sig, sizeof sig))
			break;
	fclose(f);
	if (memcmp(sb, sig, sizeof sig) || sb[8] > 1)
		return MK_OK; /* not found (libhdf5 will say) or checksummed */
	s = sb[13];
	if (s < 2 || s > 8 || 28 + (sb[8] == 1 ? 4 : 0) + 4 * s > sizeof sb)
		ok = s == 16 || s == 32; /* libhdf5 rejects these itself or reads them whole */
	else {
		const unsigned char *p = sb + 24 + (sb[8] == 1 ? 4 : 0) + s; /* past the base */
		free_space = tensor_sb_addr(p, s);
		eof = tensor_sb_addr(p + s, s);
		driver = tensor_sb_addr(p + 2 * s, s);
		ok = eof != UINT64_MAX && (free_space == UINT64_MAX || free_space < eof) &&
		     (driver == UINT64_MAX || driver < eof);
	}
	return ok ? MK_OK : mk_error_set(MK_EFORMAT, "'%s': the file's superblock is damaged "
					 "(an address past its end): not writing into it", path);
}

/* *base = path when it is an HDF5 file to add the dataset to; NULL when
 * there is nothing to keep (no file, an empty one, or a device or FIFO,
 * which is written in place); refused when it holds anything else. */
static int tensor_h5_base(const char *path, const char **base)
{
	struct stat st;
	htri_t is_h5;
	int ret;

	*base = NULL;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return MK_OK;
	if (access(path, R_OK) != 0)
		return mk_error_errno(errno, "'%s': cannot read the existing file to add to it",
				      path);
	if ((ret = mk_h5_silence()))
		return ret;
#if H5_VERSION_GE(1, 12, 0)
	is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
	is_h5 = H5Fis_hdf5(path);
#endif
	if (is_h5 <= 0)
		return mk_error_set(MK_EINVAL, "'%s' exists and is not an HDF5 file: not replacing "
				    "it (remove it or name another file)", path);
	*base = path;
	return tensor_h5_check_superblock(path);
}

static int tensor_write_job(struct tensor_job *job, const char *spec, const char *dataset)
{
	const char *given;
	char *file = NULL;
	int ret = mk_tensor_spec(spec, &file, &given, &job->format);
	uint64_t ready = 0, count = mk_tensor_count(job->t);

	job->dataset = given ? given : dataset;
	job->dest = file;
	if (ret == MK_OK && job->format == MK_FMT_H5 && (!job->dataset || !*job->dataset))
		ret = mk_error_set(MK_EINVAL, "'%s': no dataset name to write", spec);
	if (ret == MK_OK && job->format == MK_FMT_H5)
		ret = tensor_h5_base(file, &job->base);
	/* HDF5 is written whole: the producer finishes first */
	while (ret == MK_OK && job->produce && job->format == MK_FMT_H5 && ready < count) {
		mk_tensor_sink none = {NULL};
		uint64_t before = ready;
		if ((ret = job->produce(job->arg, &none, &ready)))
			job->produce_failed = true;
		else if (ready <= before)
			ret = mk_error_set(MK_EINTERNAL, "a tensor's producer made no progress");
	}
	if (ret == MK_OK) { /* which names file in its messages, unless the producer failed */
		ret = mk_io_atomic_raw(file, tensor_write_tmp, job);
		if (!job->produce_failed)
			ret = mk_io_name_error(ret, file);
	}
	free(file);
	return ret;
}

int mk_tensor_write(const mk_tensor *t, const char *spec, const char *dataset, mk_dtype dtype)
{
	struct tensor_job job = {.t = t, .dtype = dtype};
	return tensor_write_job(&job, spec, dataset);
}

int mk_tensor_write_parts(const mk_tensor *t, const char *spec, const char *dataset,
			  mk_dtype dtype, mk_tensor_produce produce, void *arg)
{
	struct tensor_job job = {.t = t, .dtype = dtype, .produce = produce, .arg = arg};
	return tensor_write_job(&job, spec, dataset);
}

/* ---- outputs that are inputs -------------------------------------------------- */


/* True when writing dataset `out` of the HDF5 file at path would replace
 * the input dataset `in` (NULL: the file's only dataset of rank 2 to 4,
 * which mk_tensor_read took). */
static bool tensor_h5_clash(const char *path, const char *out, const char *in)
{
	hid_t file = H5I_INVALID_HID, a = H5I_INVALID_HID, b = H5I_INVALID_HID, space;
	bool clash = false;
	int rank;

	if (mk_h5_open(path, &file) != MK_OK || !tensor_h5_exists(file, out) ||
	    (a = H5Oopen(file, out, H5P_DEFAULT)) < 0 || H5Iget_type(a) != H5I_DATASET) {
		/* nothing there to replace, or a group that the write refuses */
	} else if (in) {
		clash = tensor_h5_exists(file, in) && (b = H5Oopen(file, in, H5P_DEFAULT)) >= 0 &&
			mk_h5_same_object(a, b);
	} else if ((space = H5Dget_space(a)) >= 0) {
		rank = H5Sget_simple_extent_ndims(space);
		clash = rank >= 2 && rank <= MK_TENSOR_MAX_RANK;
		H5Sclose(space);
	}
	if (b >= 0)
		H5Oclose(b);
	if (a >= 0)
		H5Oclose(a);
	if (file >= 0)
		H5Fclose(file);
	return clash;
}

int mk_tensor_check_output(const char *out, const char *dataset, const char *const *inputs,
			   size_t count)
{
	const char *ods, *ids;
	char *ofile = NULL, *ifile = NULL;
	mk_format ofmt, ifmt;
	struct stat ost, ist;
	int ret = mk_tensor_spec(out, &ofile, &ods, &ofmt);

	if (ret || stat(ofile, &ost) != 0) { /* a new file: no input can be it */
		free(ofile);
		return ret;
	}
	if (!ods)
		ods = dataset;
	for (size_t k = 0; ret == MK_OK && k < count; k++) {
		if (mk_tensor_spec(inputs[k], &ifile, &ids, &ifmt) == MK_OK &&
		    stat(ifile, &ist) == 0 && ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino &&
		    (ofmt != MK_FMT_H5 || ifmt != MK_FMT_H5 || !ods ||
		     tensor_h5_clash(ofile, ods, ids)))
			ret = mk_error_set(MK_EINVAL, "the output '%s' would overwrite the input '%s' "
					   "(write another file%s)", out, inputs[k],
					   ofmt == MK_FMT_H5 ? " or dataset" : "");
		free(ifile);
		ifile = NULL;
	}
	free(ofile);
	return ret;
}
