/*
 * Queries and keys for `maskkit explain`: from an HDF5 group holding q and
 * k, or a layer's input x with its projections wq, wk (and biases bq, bk),
 * from two tensor files, or Gaussian at random.  Whatever the source, the
 * result is float32 [heads, S, d] for both.
 */
#include "config.h"
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"
#include "explain.h"
#include "h5util.h"

#define QK_TAG_RANDOM 0x716b726eULL /* "qkrn" */

void mk_qk_release(mk_qk *x)
{
	if (!x)
		return;
	mk_tensor_release(&x->q);
	mk_tensor_release(&x->k);
	memset(x, 0, sizeof *x);
}

static void qk_shape(const mk_tensor *t, char *buf, size_t cap)
{
	mk_tensor_shape_text(t, buf, cap);
}

/* Takes q and k ([S, d], [heads, S, d] or [batch, heads, S, d], the
 * leading axes flattened into heads), refusing different shapes. */
int mk_qk_adopt(mk_tensor *q, mk_tensor *k, mk_qk *out)
{
	char a[96], b[96];
	int r = q->rank;

	memset(out, 0, sizeof *out);
	if (q->rank != k->rank || memcmp(q->dims, k->dims, (size_t)r * sizeof q->dims[0])) {
		qk_shape(q, a, sizeof a);
		qk_shape(k, b, sizeof b);
		mk_tensor_release(q);
		mk_tensor_release(k);
		return mk_error_set(MK_EINVAL, "Q and K differ in shape: Q is %s, K is %s "
				    "(both must be [S, d] or [heads, S, d])", a, b);
	}
	out->q = *q;
	out->k = *k;
	memset(q, 0, sizeof *q);
	memset(k, 0, sizeof *k);
	out->n = out->q.dims[r - 2];
	out->d = out->q.dims[r - 1];
	out->heads = 1;
	for (int a2 = 0; a2 < r - 2; a2++)
		out->heads *= out->q.dims[a2];
	return MK_OK;
}

int mk_qk_random(int64_t heads, int64_t n, int64_t d, double scale, uint64_t seed,
		 uint64_t max_memory, mk_qk *out)
{
	int64_t dims[3] = {heads, n, d};
	mk_tensor q = {0}, k = {0};
	int ret;

	memset(out, 0, sizeof *out);
	if (!(scale > 0) || !isfinite(scale))
		return mk_error_set(MK_EINVAL, "the scale of random Q and K must be positive and "
				    "finite, got %g", scale);
	if ((ret = mk_tensor_new(3, dims, MK_DTYPE_F32, max_memory, "random Q", &q)) ||
	    (ret = mk_tensor_new(3, dims, MK_DTYPE_F32, max_memory, "random K", &k))) {
		mk_tensor_release(&q);
		return ret;
	}
	/* a stream per (tensor, head), so that head h does not depend on H */
	for (int64_t h = 0; h < heads; h++)
		for (int t = 0; t < 2; t++) {
			float *p = (t ? k.data : q.data) + (size_t)(h * n * d);
			mk_rng g;
			mk_rng_seed(&g, seed, QK_TAG_RANDOM, (uint64_t)(2 * h + t));
			for (int64_t e = 0; e < n * d; e += 2) {
				double z[2];
				mk_rng_normal2(&g, z);
				p[e] = (float)(scale * z[0]);
				if (e + 1 < n * d)
					p[e + 1] = (float)(scale * z[1]);
			}
		}
	return mk_qk_adopt(&q, &k, out);
}

/* A 1-D float bias of `want` entries (HDF5 converts any float type). */
static int qk_read_bias(hid_t file, const char *path, const char *name, int64_t want,
			uint64_t max_memory, float **out)
{
	hid_t ds = H5Dopen2(file, name, H5P_DEFAULT), sp = H5I_INVALID_HID, ty = H5I_INVALID_HID;
	hsize_t dims[2] = {0, 0};
	int ret = MK_OK;

	*out = NULL;
	if (ds < 0)
		return mk_error_set(MK_EFORMAT, "%s: cannot open '%s'", path, name);
	sp = H5Dget_space(ds);
	ty = H5Dget_type(ds);
	if (sp < 0 || ty < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
	    H5Sget_simple_extent_dims(sp, dims, NULL) != 1 || dims[0] != (hsize_t)want ||
	    H5Tget_class(ty) != H5T_FLOAT) {
		ret = mk_error_set(MK_EFORMAT, "%s: '%s' must be a 1-D float dataset of %lld "
				   "entries", path, name, (long long)want);
		goto cleanup;
	}
	if ((ret = mk_h5_prepare_read(&ds, path, name, 1, dims, &(mk_h5_reads){
			.count = dims, .steps = {-1, -1}, .max_memory = max_memory,
			.used = (uint64_t)want * sizeof **out})))
		goto cleanup;
	if (!(*out = malloc((size_t)want * sizeof **out))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for '%s'", name);
		goto cleanup;
	}
	if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
		ret = mk_error_set(MK_EFORMAT, "%s: cannot read '%s'", path, name);
		goto cleanup;
	}
	for (int64_t e = 0; e < want; e++)
		if (!isfinite((*out)[e])) {
			ret = mk_error_set(MK_EFORMAT, "%s: '%s'[%lld] is not a finite float32 (NaN, "
					   "Inf or beyond float32's range)", path, name, (long long)e);
			break;
		}
cleanup:
	if (ret) {
		free(*out);
		*out = NULL;
	}
	if (ty >= 0)
		H5Tclose(ty);
	if (sp >= 0)
		H5Sclose(sp);
	if (ds >= 0)
		H5Dclose(ds);
	return ret;
}

/* out [heads, S, d] = x [S, D] W^T + b per head: W is [heads d, D] as
 * PyTorch's Linear stores it, or [D, heads d] (tf) as Keras does. */
static int qk_project(const mk_tensor *x, const mk_tensor *w, const float *b, int64_t heads,
		      bool tf, uint64_t max_memory, const char *what, mk_tensor *out)
{
	int64_t s = x->dims[0], dm = x->dims[1];
	int64_t o = tf ? w->dims[1] : w->dims[0], win = tf ? w->dims[0] : w->dims[1], d;
	mk_tensor tmp = {0};
	int ret;

	if (x->rank != 2 || w->rank != 2)
		return mk_error_set(MK_EINVAL, "x and %s must be matrices ([S, D] and %s)", what,
				    tf ? "[D, heads d]" : "[heads d, D]");
	if (win != dm) {
		mk_error_set(MK_EINVAL, "%s has %lld inputs but x has D = %lld; is it stored the "
			     "other way round?", what, (long long)win, (long long)dm);
		return mk_error_param("tf");
	}
	if (o % heads) {
		mk_error_set(MK_EINVAL, "%s has %lld outputs, not a multiple of the %lld heads", what,
			     (long long)o, (long long)heads);
		return mk_error_param("heads");
	}
	d = o / heads;
	if (s > INT_MAX || o > INT_MAX || dm > INT_MAX)
		return mk_error_set(MK_ERANGE, "x and %s are too large for BLAS (a dimension above "
				    "%d)", what, INT_MAX);
	if ((ret = mk_blas_room(1)) ||
	    (ret = mk_tensor_new(2, (int64_t[]){s, o}, MK_DTYPE_F32, max_memory, what, &tmp)) ||
	    (ret = mk_tensor_new(3, (int64_t[]){heads, s, d}, MK_DTYPE_F32, max_memory, what,
				 out)))
		goto cleanup;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, tf ? CblasNoTrans : CblasTrans, (int)s, (int)o,
		    (int)dm, 1.0f, x->data, (int)dm, w->data, tf ? (int)o : (int)dm, 0.0f,
		    tmp.data, (int)o);
	for (int64_t i = 0; i < s; i++)
		for (int64_t c = 0; c < o; c++) {
			float y = tmp.data[i * o + c] + (b ? b[c] : 0.0f);
			if (!isfinite(y)) {
				ret = mk_error_set(MK_ERANGE, "x %s overflows float32 at token %lld, "
						   "output %lld (the inputs are too large)", what,
						   (long long)i, (long long)c);
				goto cleanup;
			}
			out->data[((c / d) * s + i) * d + c % d] = y;
		}
cleanup:
	if (ret)
		mk_tensor_release(out);
	mk_tensor_release(&tmp);
	return ret;
}

/* "FILE.h5:/group" into the file name and the group ("" for the root). */
static int qk_split(const char *spec, char *path, size_t cap, const char **group)
{
	const char *colon = NULL;

	for (const char *p = strstr(spec, ":/"); p; p = strstr(p + 1, ":/"))
		colon = p;
	*group = colon ? colon + 1 : "";
	if ((size_t)(colon ? colon - spec : (ptrdiff_t)strlen(spec)) >= cap)
		return mk_error_set(MK_EINVAL, "the input name '%s' is too long", spec);
	snprintf(path, cap, "%.*s", (int)(colon ? colon - spec : (ptrdiff_t)strlen(spec)), spec);
	return MK_OK;
}

typedef struct qk_file {
	const char *path, *group;
	hid_t h;
} qk_file;

/* Opens spec's file (path: its buffer of cap bytes) for reading its group. */
static int qk_open_file(const char *spec, char *path, size_t cap, qk_file *f)
{
	int ret;

	if ((ret = qk_split(spec, path, cap, &f->group)))
		return ret;
	return mk_h5_open(path, &f->h); /* loads HDF5 and silences it */
}

static bool qk_has(const qk_file *f, const char *name)
{
	char full[4096];
	snprintf(full, sizeof full, "%s/%s", f->group, name);
	return mk_h5_is_dataset(f->h, full);
}

/* The layers of `maskkit encode --qk`'s groups /qk/layer_L in f (0: none):
 * a file named without its group gets them as a hint.  Each step is looked
 * up in turn (H5Lexists fails on a missing group on the way). */
static int64_t qk_encode_layers(const qk_file *f)
{
	char name[64];
	int64_t l = 0;

	if (H5Lexists(f->h, "/qk", H5P_DEFAULT) <= 0)
		return 0;
	for (;; l++) {
		snprintf(name, sizeof name, "/qk/layer_%lld", (long long)l);
		if (H5Lexists(f->h, name, H5P_DEFAULT) <= 0)
			break;
		snprintf(name, sizeof name, "/qk/layer_%lld/q", (long long)l);
		if (!mk_h5_is_dataset(f->h, name))
			break;
	}
	return l;
}

/* "; ..." naming encode's groups when f's group is the root and the file
 * has them, else "". */
static void qk_hint(const qk_file *f, char *buf, size_t cap)
{
	int64_t layers = *f->group && strcmp(f->group, "/") ? 0 : qk_encode_layers(f);

	buf[0] = '\0';
	if (layers == 1)
		snprintf(buf, cap, "; it holds encode --qk's group: name it, %s:/qk/layer_0", f->path);
	else if (layers > 1)
		snprintf(buf, cap, "; it holds encode --qk's groups for layers 0..%lld: name one, as "
			 "%s:/qk/layer_0", (long long)layers - 1, f->path);
}

static int qk_tensor(const qk_file *f, const char *name, uint64_t max_memory, mk_tensor *t)
{
	char spec[8192];
	snprintf(spec, sizeof spec, "%s:%s/%s", f->path, f->group, name);
	return mk_tensor_read(spec, max_memory, t);
}

/* x, wq, wk (and bq, bk when present) projected into q and k. */
static int qk_read_layer(const qk_file *f, int64_t heads, bool tf, uint64_t max_memory,
			 mk_tensor *q, mk_tensor *k)
{
	static const char *const wname[2] = {"wq", "wk"}, *const bname[2] = {"bq", "bk"};
	mk_tensor x = {0}, w = {0};
	float *b = NULL;
	int ret;

	if (heads < 1) {
		mk_error_set(MK_EINVAL, "%s holds x, wq and wk: give the head count", f->path);
		return mk_error_param("heads");
	}
	if ((ret = qk_tensor(f, "x", max_memory, &x)))
		return ret;
	for (int t = 0; t < 2 && ret == MK_OK; t++) {
		char full[4096];
		if ((ret = qk_tensor(f, wname[t], max_memory, &w)))
			break;
		snprintf(full, sizeof full, "%s/%s", f->group, bname[t]);
		if (w.rank != 2)
			ret = mk_error_set(MK_EINVAL, "%s must be a matrix, got rank %d", wname[t],
					   w.rank);
		else if (qk_has(f, bname[t]))
			ret = qk_read_bias(f->h, f->path, full, tf ? w.dims[1] : w.dims[0], max_memory,
					   &b);
		else if (H5Lexists(f->h, full, H5P_DEFAULT) > 0)
			ret = mk_error_set(MK_EFORMAT, "%s: '%s' is not a dataset", f->path, full);
		if (ret == MK_OK)
			ret = qk_project(&x, &w, b, heads, tf, max_memory, wname[t], t ? k : q);
		mk_tensor_release(&w);
		free(b);
		b = NULL;
	}
	mk_tensor_release(&x);
	return ret;
}

int mk_qk_read(const char *spec, int64_t heads, bool tf, uint64_t max_memory, mk_qk *out)
{
	char path[4096];
	qk_file f = {.path = path, .h = H5I_INVALID_HID};
	mk_tensor q = {0}, k = {0};
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = qk_open_file(spec, path, sizeof path, &f)))
		return ret;
	if (qk_has(&f, "q") || qk_has(&f, "k")) {
		if (!qk_has(&f, "q") || !qk_has(&f, "k")) {
			ret = mk_error_set(MK_EFORMAT, "%s: '%s/%s' is missing (q and k go together)",
					   path, f.group, qk_has(&f, "q") ? "k" : "q");
			goto cleanup;
		}
		if ((ret = qk_tensor(&f, "q", max_memory, &q)) ||
		    (ret = qk_tensor(&f, "k", max_memory, &k)))
			goto cleanup;
		ret = mk_qk_adopt(&q, &k, out);
		if (ret == MK_OK && heads > 0 && heads != out->heads) {
			mk_error_set(MK_EINVAL, "%lld heads given but q and k hold %lld",
				     (long long)heads, (long long)out->heads);
			ret = mk_error_param("heads");
		}
	} else if (qk_has(&f, "x") && qk_has(&f, "wq") && qk_has(&f, "wk")) {
		if ((ret = qk_read_layer(&f, heads, tf, max_memory, &q, &k)) == MK_OK)
			ret = mk_qk_adopt(&q, &k, out);
	} else if (*f.group && mk_h5_is_dataset(f.h, f.group)) {
		ret = mk_error_set(MK_EINVAL, "%s: '%s' is a dataset; INPUT names the group that "
				   "holds q and k (or x, wq and wk)", path, f.group);
	} else {
		char hint[600];
		qk_hint(&f, hint, sizeof hint);
		ret = mk_error_set(MK_EFORMAT, "%s: no datasets q and k (nor x, wq and wk) in '%s'%s",
				   path, *f.group ? f.group : "/", hint);
	}
cleanup:
	mk_tensor_release(&q);
	mk_tensor_release(&k);
	if (ret)
		mk_qk_release(out);
	H5Fclose(f.h);
	return ret;
}

/* ---- one sample of maskkit encode's queries and keys ------------------------- */

/* Dataset group/name, q or k, as encode --qk writes it: [samples, heads, N,
 * dk] (padded), or [tokens, heads, dk] with the attribute layout = "ragged";
 * opened in *d, its rank in *rank. */
static int qk_open_qk(const qk_file *f, const char *name, hid_t *d, hsize_t dims[4], int *rank)
{
	char full[4096], layout[16];
	hid_t sp;
	bool ok;

	snprintf(full, sizeof full, "%s/%s", f->group, name);
	if (!mk_h5_is_dataset(f->h, full)) {
		char hint[600];
		qk_hint(f, hint, sizeof hint);
		mk_error_set(MK_EFORMAT, "%s: no dataset '%s'; a sample is read from a group holding "
			     "q and k [samples, heads, N, dk], as maskkit encode --qk writes%s",
			     f->path, full, hint);
		return mk_error_param("sample");
	}
	if ((*d = H5Dopen2(f->h, full, H5P_DEFAULT)) < 0)
		return mk_error_set(MK_EFORMAT, "%s: cannot open '%s'", f->path, full);
	mk_h5_attr_text(*d, "layout", layout, sizeof layout);
	sp = H5Dget_space(*d);
	*rank = strcmp(layout, "ragged") ? 4 : 3;
	ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == *rank &&
	     H5Sget_simple_extent_dims(sp, dims, NULL) == *rank;
	if (sp >= 0)
		H5Sclose(sp);
	if (!ok) {
		mk_error_set(MK_EFORMAT, "%s: '%s' must be %s to read a sample", f->path, full,
			     *rank == 4 ? "[samples, heads, N, dk]" : "ragged [tokens, heads, dk]");
		return mk_error_param("sample");
	}
	return mk_h5_check_layout(*d, f->path, full, *rank, dims);
}

/* Sample s's len rows of each head, [heads, len, dk], as float32: padded,
 * the first len of its N; ragged (rank 3), rows from..from + len of the
 * tokens, moved from [len, heads, dk]. */
static int qk_read_rows(const qk_file *f, hid_t d, const hsize_t *dims, int rank, int64_t s,
			int64_t from, int64_t len, uint64_t max_memory, const char *what,
			mk_tensor *t)
{
	hsize_t start4[4] = {(hsize_t)s, 0, 0, 0}, count4[4] = {1, dims[1], (hsize_t)len, dims[3]};
	hsize_t start3[3] = {(hsize_t)from, 0, 0}, count3[3] = {(hsize_t)len, dims[1], dims[2]};
	int64_t heads = (int64_t)dims[1], dk = (int64_t)dims[rank - 1];
	hid_t fsp = H5I_INVALID_HID, msp = H5I_INVALID_HID;
	mk_tensor tmp = {0};
	int ret = mk_tensor_new(3, (int64_t[]){heads, len, dk}, MK_DTYPE_F32, max_memory, what, t);

	if (ret == MK_OK && rank == 3)
		ret = mk_tensor_new(3, (int64_t[]){len, heads, dk}, MK_DTYPE_F32, max_memory, what,
				    &tmp);
	if (ret)
		goto cleanup;
	fsp = H5Dget_space(d);
	msp = H5Screate_simple(rank, rank == 3 ? count3 : count4, NULL);
	if (fsp < 0 || msp < 0 ||
	    H5Sselect_hyperslab(fsp, H5S_SELECT_SET, rank == 3 ? start3 : start4, NULL,
				rank == 3 ? count3 : count4, NULL) < 0 ||
	    H5Dread(d, H5T_NATIVE_FLOAT, msp, fsp, H5P_DEFAULT, rank == 3 ? tmp.data : t->data) < 0)
		ret = mk_error_set(MK_EFORMAT, "%s: cannot read sample %lld of '%s/%s'", f->path,
				   (long long)s, f->group, what);
	for (int64_t i = 0; ret == MK_OK && rank == 3 && i < len; i++)
		for (int64_t h = 0; h < heads; h++)
			memcpy(t->data + (h * len + i) * dk, tmp.data + (i * heads + h) * dk,
			       (size_t)dk * sizeof *t->data);
	for (uint64_t e = 0; ret == MK_OK && e < mk_tensor_count(t); e++)
		if (!isfinite(t->data[e]))
			ret = mk_error_set(MK_EFORMAT, "%s: '%s/%s' of sample %lld holds NaN or Inf",
					   f->path, f->group, what, (long long)s);
cleanup:
	if (msp >= 0)
		H5Sclose(msp);
	if (fsp >= 0)
		H5Sclose(fsp);
	mk_tensor_release(&tmp);
	if (ret)
		mk_tensor_release(t);
	return ret;
}

/* The samples whose rows q and k hold: padded, their leading axis; ragged,
 * as many of the lengths as add up to their tokens (MK_EFORMAT when none
 * do).  *from: the sample's first row (ragged). */
static int qk_samples(const qk_file *f, const hsize_t *qd, int rank, const int64_t *len,
		      int64_t count, int64_t sample, int64_t *samples, int64_t *from)
{
	int64_t sum = 0, k = 0;

	*from = *samples = 0;
	if (rank == 4) {
		*samples = (int64_t)qd[0];
		if (len && count < *samples)
			return mk_error_set(MK_EFORMAT, "%s: '/lengths' has %lld entries but q and k of "
					    "'%s' %lld samples", f->path, (long long)count, f->group,
					    (long long)*samples);
		return MK_OK;
	}
	if (!len)
		return mk_error_set(MK_EFORMAT, "%s: the ragged q and k of '%s' are read with the "
				    "file's '/lengths', which it lacks", f->path, f->group);
	for (; k < count && sum < (int64_t)qd[0]; k++) {
		if (k == sample)
			*from = sum;
		sum += len[k];
	}
	if (sum != (int64_t)qd[0])
		return mk_error_set(MK_EFORMAT, "%s: the ragged q and k of '%s' hold %llu tokens, not "
				    "the lengths of their first samples added up", f->path, f->group,
				    (unsigned long long)qd[0]);
	*samples = k;
	return MK_OK;
}

int mk_qk_read_sample(const char *spec, int64_t sample, uint64_t max_memory, mk_qk *out)
{
	char path[4096];
	qk_file f = {.path = path, .h = H5I_INVALID_HID};
	hid_t dq = H5I_INVALID_HID, dk = H5I_INVALID_HID;
	hsize_t qd[4] = {0}, kd[4] = {0};
	int64_t *len = NULL, count = 0, n, samples, from;
	int qrank, krank;
	mk_tensor q = {0}, k = {0};
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = qk_open_file(spec, path, sizeof path, &f)))
		return ret;
	if ((ret = qk_open_qk(&f, "q", &dq, qd, &qrank)) ||
	    (ret = qk_open_qk(&f, "k", &dk, kd, &krank)))
		goto cleanup;
	if (qrank != krank || memcmp(qd, kd, sizeof qd)) {
		ret = mk_error_set(MK_EFORMAT, "%s: q and k of '%s' differ in shape", path, f.group);
		goto cleanup;
	}
	/* the sample's real length: the file's /lengths, else all N rows */
	n = (int64_t)qd[2];
	if (mk_h5_is_dataset(f.h, "/lengths") &&
	    ((ret = mk_h5_read_lengths(f.h, path, "/lengths", -1, &len, &count)) ||
	     (ret = mk_lengths_check(len, count, qrank == 4 ? n : MK_N_MAX, "/lengths",
				     " (N of q and k)"))))
		goto cleanup;
	if ((ret = qk_samples(&f, qd, qrank, len, count, sample, &samples, &from)))
		goto cleanup;
	if (sample < 0 || sample >= samples) {
		mk_error_set(MK_EINVAL, "sample %lld, but '%s' holds %lld samples, 0 to %lld",
			     (long long)sample, *f.group ? f.group : "/", (long long)samples,
			     (long long)samples - 1);
		ret = mk_error_param("sample");
		goto cleanup;
	}
	if (len)
		n = len[sample];
	if ((ret = qk_read_rows(&f, dq, qd, qrank, sample, from, n, max_memory, "q", &q)) ||
	    (ret = qk_read_rows(&f, dk, kd, krank, sample, from, n, max_memory, "k", &k)))
		goto cleanup;
	ret = mk_qk_adopt(&q, &k, out);
cleanup:
	mk_tensor_release(&q);
	mk_tensor_release(&k);
	free(len);
	if (dq >= 0)
		H5Dclose(dq);
	if (dk >= 0)
		H5Dclose(dk);
	H5Fclose(f.h);
	return ret;
}
