/*
 * MPI's table of functions, filled when a launcher started the process
 * (par_mpi.h says why).
 */
#include "config.h"
#include <dlfcn.h>
#define MK_PAR_MPI_TABLE /* the real names below: dlsym's strings and members */
#include "par_mpi.h"
#include "core.h"
#include "lazy.h"

static const char *const mpi_files[] = {MK_MPI_SONAME, MK_MPI_PATH, NULL};

static struct mk_mpi_api mpi_api;
static mk_lazy_state mpi_state = MK_LAZY_STATE_INIT;

static void mpi_fill(void)
{
	/* global: Open MPI's plugins, which it loads itself, take their
	 * symbols from libmpi and libopen-pal */
	mk_lazy_lib lib = {.what = "MPI", .files = mpi_files, .flags = RTLD_NOW | RTLD_GLOBAL};
	bool preloaded = mk_lazy_loaded(mpi_files);
	const char *file;
	void *h = mk_lazy_open(&lib, &file);

	if (!h)
		goto out;
#define MK_MPI_GET(f) \
	if (!(mpi_api.f = (__typeof__(mpi_api.f))mk_lazy_sym(h, file, MK_LAZY_STR(f)))) \
		goto out;
	MK_MPI_FUNCS(MK_MPI_GET)
#undef MK_MPI_GET
#define MK_MPI_GET_VAR(v) \
	if (!(mpi_api.v = (__typeof__(mpi_api.v))mk_lazy_var(h, file, MK_LAZY_STR(v), preloaded))) \
		goto out;
	MK_MPI_VARS(MK_MPI_GET_VAR)
#undef MK_MPI_GET_VAR
	return;
out:
	mk_lazy_failed(&mpi_state);
}

int mk_mpi_load(void)
{
	return mk_lazy_load(&mpi_state, mpi_fill);
}

const struct mk_mpi_api *mk_mpi_api(void)
{
	mk_lazy_need(&mpi_state, mpi_fill);
	return &mpi_api;
}
