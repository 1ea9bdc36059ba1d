/*
 * HDF5's table of functions, filled on first use (h5lazy.h says why).
 */
#include "config.h"
#include <dlfcn.h>
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
static mk_lazy_state h5_state = MK_LAZY_STATE_INIT;

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
	return;
out:
	/* the handle stays open: a half-filled table is never used */
	mk_lazy_failed(&h5_state);
}

int mk_h5_load(void)
{
	return mk_lazy_load(&h5_state, h5_fill);
}

const struct mk_h5_api *mk_h5_api(void)
{
	mk_lazy_need(&h5_state, h5_fill);
	return &h5_api;
}
