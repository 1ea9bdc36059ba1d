/* The weights API's sources (weights_open.c dispatches to them): HDF5
 * (weights.c), safetensors and .npy (weights_st.c); private to src/io. */
#ifndef MK_WEIGHTS_INTERNAL_H
#define MK_WEIGHTS_INTERNAL_H

#include "weights.h"
#include "model.h"
#include "h5util.h"
#include "safetensors.h"

typedef enum mk_weights_kind {
	MK_WEIGHTS_H5, MK_WEIGHTS_ST, MK_WEIGHTS_NPY
} mk_weights_kind;

struct mk_weights {
	mk_weights_kind kind;
	char *path;               /* as given: a file or a model directory */
	hid_t file, lapl;         /* HDF5; lapl refuses external links */
	mk_st *st;                /* safetensors */
	struct {                  /* .npy: one 2-D array */
		int64_t dims[2];
		char descr[16];
		bool fortran;
		uint64_t offset;  /* of the data */
		char *file;       /* the .npy file */
	} npy;
	bool has_config;
	mk_model_config config;
};

/* The name of an .npy file's one array. */
#define MK_WEIGHTS_NPY_NAME "/"

int mk_weights_h5_open(mk_weights *w, const char *file);
void mk_weights_h5_close(mk_weights *w);
int mk_weights_h5_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		       size_t *count);
int mk_weights_h5_read(mk_weights *w, const char *dataset, int rank, uint64_t max_memory,
		       mk_matrix *out);
int mk_weights_h5_read_f32(mk_weights *w, const char *dataset, uint64_t max_memory,
			   float **out, int *rank, int64_t dims[4]);

int mk_weights_st_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		       size_t *count);
int mk_weights_st_read(mk_weights *w, const char *name, int rank, uint64_t max_memory,
		       mk_matrix *out);
int mk_weights_st_read_f32(mk_weights *w, const char *name, uint64_t max_memory, float **out,
			   int *rank, int64_t dims[4]);

int mk_weights_npy_open(mk_weights *w, const char *file);
int mk_weights_npy_read(mk_weights *w, const char *name, int rank, uint64_t max_memory,
			mk_matrix *out);
int mk_weights_npy_read_f32(mk_weights *w, const char *name, uint64_t max_memory, float **out,
			    int *rank, int64_t dims[4]);

/* "/a/b" from "a/b", "/a/b" or "//a//b/"; malloc'd (NULL: out of memory). */
char *mk_weights_normalise(const char *dataset);
/* The first NaN or infinity of count values (doubles, or floats when f32)
 * of a tensor of the given dims is an MK_EFORMAT error naming it. */
int mk_weights_check_values(const mk_weights *w, const char *name, const void *data, bool f32,
			    int rank, const int64_t *dims);

#endif
