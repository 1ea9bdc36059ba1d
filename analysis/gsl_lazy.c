/*
 * GSL's table of functions, filled on first use (gsl_lazy.h says why).
 */
#include "config.h"
#include <dlfcn.h>
#include <stdbool.h>
#define MK_GSL_LAZY_TABLE /* the real names below: dlsym's strings and members */
#include "gsl_lazy.h"
#include "core.h"
#include "lazy.h"

/* the soname configure found, then the path it linked it from */
static const char *const gsl_files[] = {MK_GSL_SONAME, MK_GSL_PATH, NULL};

static struct mk_gsl_api gsl_api;
static mk_lazy_state gsl_state = MK_LAZY_STATE_INIT;

static void gsl_fill(void)
{
	/* its own cblas, libgslcblas, comes as its dependency */
	mk_lazy_lib lib = {.what = "GSL", .files = gsl_files, .flags = RTLD_NOW | RTLD_LOCAL};
	bool preloaded = mk_lazy_loaded(gsl_files);
	const char *file;
	void *h = mk_lazy_open(&lib, &file);

	if (!h)
		goto out;
#define MK_GSL_GET(f) \
	if (!(gsl_api.f = (__typeof__(gsl_api.f))mk_lazy_sym(h, file, #f))) \
		goto out;
	MK_GSL_FUNCS(MK_GSL_GET)
#undef MK_GSL_GET
#define MK_GSL_GET_VAR(v) \
	if (!(gsl_api.v = (__typeof__(gsl_api.v))mk_lazy_var(h, file, #v, preloaded))) \
		goto out;
	MK_GSL_VARS(MK_GSL_GET_VAR)
#undef MK_GSL_GET_VAR
	/* GSL's default handler aborts; a library must return a status
	 * instead.  Process-wide, so done once and never undone. */
	gsl_api.gsl_set_error_handler_off();
	return;
out:
	/* the handle stays open: a half-filled table is never used */
	mk_lazy_failed(&gsl_state);
}

int mk_gsl_load(void)
{
	return mk_lazy_load(&gsl_state, gsl_fill);
}

const struct mk_gsl_api *mk_gsl_api(void)
{
	mk_lazy_need(&gsl_state, gsl_fill);
	return &gsl_api;
}
