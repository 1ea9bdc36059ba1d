/*
 * HDF5's table of functions, filled on first use (h5lazy.h says why).
 */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define MK_H5LAZY_TABLE /* the real names below: dlsym's strings and members */
#include "h5lazy.h"
#include "core.h"
#include "par.h"
#include "lazy.h"

/* the sonames configure found, then the paths it linked them from */
static const char *const h5_serial[] = {MK_HDF5_SONAME, MK_HDF5_PATH, NULL};
#if HAVE_MPI
static const char *const h5_parallel[] = {MK_HDF5P_SONAME, MK_HDF5P_PATH, NULL};
#endif

static struct mk_h5_api h5_api;
static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static int h5_status;
static char h5_message[512];

/* Serial HDF5 unless ranks share the files (mk_h5_open_par needs MPI-IO),
 * the parallel one is in the process already, or no serial one was found
 * at configure time. */
static const char *const *h5_files(bool *parallel)
{
	static const char *user[2];

	*parallel = false;
	/* MASKKIT_HDF5_LIB: an HDF5 of the same version outside the loader's
	 * path (a conda environment), or a missing one (the test of the error) */
	if ((user[0] = getenv("MASKKIT_HDF5_LIB")) && *user[0]) {
		*parallel = mk_par_size() > 1;
		return user;
	}
#if HAVE_MPI
	if (mk_par_size() > 1 || mk_lazy_loaded(h5_parallel) ||
	    (!mk_lazy_loaded(h5_serial) && !h5_serial[0][0])) {
		*parallel = true;
		return h5_parallel;
	}
#endif
	return h5_serial;
}

static void h5_fill(void)
{
	bool parallel, preloaded;
	mk_lazy_lib lib = {.what = "HDF5", .flags = RTLD_NOW | RTLD_LOCAL};
	const char *file;
	void *h;

	lib.files = h5_files(&parallel);
	preloaded = mk_lazy_loaded(lib.files);
	h = mk_lazy_open(&lib, &file);
	if (!h)
		goto out;
#define MK_H5_GET(f) \
	if (!(h5_api.f = (__typeof__(h5_api.f))mk_lazy_sym(h, file, MK_LAZY_STR(f)))) \
		goto out;
	MK_H5_FUNCS(MK_H5_GET)
	MK_H5_FUNCS_VERSION(MK_H5_GET)
	if (parallel) {
		MK_H5_FUNCS_PAR(MK_H5_GET)
	}
#undef MK_H5_GET
#define MK_H5_GET_VAR(v) \
	if (!(h5_api.v = (__typeof__(h5_api.v))mk_lazy_var(h, file, MK_LAZY_STR(v), preloaded))) \
		goto out;
	MK_H5_VARS(MK_H5_GET_VAR)
#undef MK_H5_GET_VAR
	h5_status = MK_OK;
	return;
out:
	/* the handle stays open: a half-filled table is never used */
	h5_status = mk_error_get()->status ? mk_error_get()->status : MK_ESYS;
	snprintf(h5_message, sizeof h5_message, "%s", mk_error());
}

int mk_h5_load(void)
{
	pthread_once(&h5_once, h5_fill);
	return h5_status ? mk_error_set(h5_status, "%s", h5_message) : MK_OK;
}

const struct mk_h5_api *mk_h5_api(void)
{
	if (mk_h5_load()) {
		fprintf(stderr, "maskkit: %s\n", h5_message);
		abort();
	}
	return &h5_api;
}
