/*
 * Opening weights from the files users have (mk_weights_open in
 * weights.h): a HuggingFace model directory, a .safetensors file (or a
 * sharded checkpoint's index), an HDF5 file, a bare .npy E_P; and the
 * entry points that pass each call on to the source's reader (HDF5 in
 * weights.c, safetensors and .npy in weights_st.c).
 *
 * The kind of a file comes from its extension, then from its first bytes
 * (a safetensors header length followed by '{', the .npy magic, a PyTorch
 * zip or pickle), and anything else goes to HDF5, which gives the
 * existing "not an HDF5 file" error.  PyTorch checkpoints are pickles,
 * which can run code when loaded: we never read them and say how to
 * convert them instead.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "weights_internal.h"

#define WO_PATH 4096

#define WO_CONVERT "python3 -c \"import torch, safetensors.torch as s; d = torch.load('%s', " \
	"map_location='cpu'); s.save_file({k: v.contiguous().clone() for k, v in d.items()}, " \
	"'%s')\" (or transformers' save_pretrained(DIR, safe_serialization=True))"

static bool wo_ends_with(const char *s, const char *ext)
{
	size_t len = strlen(s), e = strlen(ext);
	return len > e && strcasecmp(s + len - e, ext) == 0;
}

static bool wo_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* "DIR/name" into buf (cap WO_PATH). */
static int wo_join(char *buf, const char *dir, const char *name)
{
	if (snprintf(buf, WO_PATH, "%s/%s", dir, name) >= WO_PATH)
		return mk_error_set(MK_EINVAL, "'%s': path too long", dir);
	return MK_OK;
}

static int wo_pytorch(const char *file, const char *dir)
{
	char out[WO_PATH];

	if (snprintf(out, sizeof out, "%s%smodel.safetensors", dir ? dir : "", dir ? "/" : "") >=
	    (int)sizeof out)
		return mk_error_set(MK_EINVAL, "'%s': path too long", file);
	return mk_error_set(MK_EFORMAT, "'%s': a PyTorch checkpoint (a pickle, which maskkit does "
			    "not load); convert it to safetensors: " WO_CONVERT, file, file, out);
}

/* config.json in dir, when there is one. */
static int wo_config(mk_weights *w, const char *dir)
{
	char path[WO_PATH];
	int ret = wo_join(path, dir, "config.json");

	if (ret || !wo_exists(path))
		return ret;
	if ((ret = mk_model_config_read(path, &w->config)) == MK_OK)
		w->has_config = true;
	return ret;
}

/* The directory of a file: "." for a bare name. */
static int wo_config_beside(mk_weights *w, const char *file)
{
	const char *slash = strrchr(file, '/');
	char dir[WO_PATH];

	if (!slash)
		return wo_config(w, ".");
	if ((size_t)(slash - file) >= sizeof dir)
		return mk_error_set(MK_EINVAL, "'%s': path too long", file);
	snprintf(dir, sizeof dir, "%.*s", slash == file ? 1 : (int)(slash - file), file);
	return wo_config(w, dir);
}

static int wo_open_st(mk_weights *w, const char *file, bool index)
{
	w->kind = MK_WEIGHTS_ST;
	return index ? mk_st_open_index(file, &w->st) : mk_st_open(file, &w->st);
}

static int wo_open_dir(mk_weights *w, const char *dir)
{
	static const char *const names[] = {
		"model.safetensors", "model.safetensors.index.json", "tf_model.h5",
		"pytorch_model.bin", "pytorch_model.bin.index.json"};
	char path[WO_PATH];
	int ret = MK_OK, k;

	for (k = 0; k < 5 && ret == MK_OK; k++)
		if ((ret = wo_join(path, dir, names[k])) == MK_OK && wo_exists(path))
			break;
	if (ret)
		return ret;
	if (k == 5)
		return mk_error_set(MK_EFORMAT, "'%s': no model.safetensors, "
				    "model.safetensors.index.json or tf_model.h5 in the directory",
				    dir);
	if (k == 4)
		return mk_error_set(MK_EFORMAT, "'%s': a sharded PyTorch checkpoint (pickles, which "
				    "maskkit does not load); convert it to safetensors with "
				    "transformers' save_pretrained(DIR, safe_serialization=True)", dir);
	if (k == 3)
		return wo_pytorch(path, dir);
	if ((ret = wo_config(w, dir)))
		return ret;
	if (k == 2) {
		w->kind = MK_WEIGHTS_H5;
		return mk_weights_h5_open(w, path);
	}
	return wo_open_st(w, path, k == 1);
}

/* By content, for a name that does not say: the first 9 bytes. */
static int wo_sniff(const char *file, unsigned char head[9], size_t *got)
{
	FILE *f;
	int ret = mk_input_open(file, (void **)&f);

	*got = 0;
	if (ret)
		return ret;
	*got = fread(head, 1, 9, f);
	fclose(f);
	return MK_OK;
}

static int wo_open_file(mk_weights *w, const char *file)
{
	unsigned char h[9] = {0};
	size_t got = 0;
	int ret;

	if (wo_ends_with(file, ".bin") || wo_ends_with(file, ".pt") || wo_ends_with(file, ".pth") ||
	    wo_ends_with(file, ".ckpt"))
		return wo_pytorch(file, NULL);
	if (wo_ends_with(file, ".npy"))
		return mk_weights_npy_open(w, file);
	if (wo_ends_with(file, ".safetensors.index.json") || wo_ends_with(file, ".safetensors"))
		return (ret = wo_open_st(w, file, wo_ends_with(file, ".json"))) ? ret
										 : wo_config_beside(w, file);
	if (!wo_ends_with(file, ".h5") && !wo_ends_with(file, ".hdf5") &&
	    wo_sniff(file, h, &got) == MK_OK) {
		if (got >= 6 && !memcmp(h, "\x93NUMPY", 6))
			return mk_weights_npy_open(w, file);
		if ((got >= 4 && !memcmp(h, "PK\x03\x04", 4)) ||
		    (got >= 2 && h[0] == 0x80 && h[1] >= 2 && h[1] <= 5))
			return wo_pytorch(file, NULL);
		if (got == 9 && h[8] == '{' && h[5] == 0 && h[6] == 0 && h[7] == 0)
			return (ret = wo_open_st(w, file, false)) ? ret : wo_config_beside(w, file);
	}
	w->kind = MK_WEIGHTS_H5;
	if ((ret = mk_weights_h5_open(w, file)))
		return ret;
	return wo_ends_with(file, "tf_model.h5") ? wo_config_beside(w, file) : MK_OK;
}

int mk_weights_open(const char *path, mk_weights **out)
{
	mk_weights *w;
	struct stat st;
	int ret;

	*out = NULL;
	if (!path)
		return mk_error_set(MK_EINVAL, "no weights file given");
	w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	w->file = w->lapl = H5I_INVALID_HID;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		ret = wo_open_dir(w, path);
	else
		ret = wo_open_file(w, path);
	if (ret) {
		mk_weights_close(w);
		return ret;
	}
	*out = w;
	return MK_OK;
}

void mk_weights_close(mk_weights *w)
{
	if (!w)
		return;
	mk_weights_h5_close(w);
	mk_st_free(w->st);
	free(w->npy.file);
	free(w->path);
	free(w);
}

const char *mk_weights_file(const mk_weights *w)
{
	return w->path;
}

const mk_model_config *mk_weights_config(const mk_weights *w)
{
	return w && w->has_config ? &w->config : NULL;
}

int mk_weights_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		    size_t *count)
{
	*out = NULL;
	*count = 0;
	if (rank < 0 || rank > 32)
		return mk_error_set(MK_EINVAL, "dataset rank must be 0 (any) to 32, got %d", rank);
	if (w->kind == MK_WEIGHTS_H5)
		return mk_weights_h5_list(w, rank, needles, out, count);
	return mk_weights_st_list(w, rank, needles, out, count);
}

int mk_weights_read(mk_weights *w, const char *dataset, int rank, uint64_t max_memory,
		    mk_matrix *out)
{
	memset(out, 0, sizeof *out);
	if (rank != 1 && rank != 2)
		return mk_error_set(MK_EINVAL, "datasets are read with rank 1 or 2, not %d", rank);
	if (!dataset)
		return mk_error_set(MK_EINVAL, "no dataset to read");
	switch (w->kind) {
	case MK_WEIGHTS_H5: return mk_weights_h5_read(w, dataset, rank, max_memory, out);
	case MK_WEIGHTS_ST: return mk_weights_st_read(w, dataset, rank, max_memory, out);
	default: return mk_weights_npy_read(w, dataset, rank, max_memory, out);
	}
}

int mk_weights_read_f32(mk_weights *w, const char *name, uint64_t max_memory, float **out,
			int *rank, int64_t dims[4])
{
	*out = NULL;
	*rank = 0;
	memset(dims, 0, 4 * sizeof *dims);
	if (!name)
		return mk_error_set(MK_EINVAL, "no dataset to read");
	switch (w->kind) {
	case MK_WEIGHTS_H5: return mk_weights_h5_read_f32(w, name, max_memory, out, rank, dims);
	case MK_WEIGHTS_ST: return mk_weights_st_read_f32(w, name, max_memory, out, rank, dims);
	default: return mk_weights_npy_read_f32(w, name, max_memory, out, rank, dims);
	}
}
