/*
 * GSL loaded on first use: libmaskkit does not link libgsl, whose 3,000
 * relocations (2,000 of them looked up by name) and its own cblas cost
 * every start of every command about 0.3 ms and 27 page faults (an empty
 * program linked with them against one without, 500 starts each;
 * docs/performance.md), though only TISA fits use it.  tisa_fit.c calls it
 * through a table of its functions and variables that mk_gsl_load() fills
 * with dlsym.  Include this instead of GSL's headers (it includes them):
 * every GSL function and variable used is redefined here to go through the
 * table, so the code reads as plain GSL.  Each call pays the table's
 * pthread_once check: 0.6 % of a `positional --fit 4` run's samples,
 * against the start every other command no longer pays.  A function missing from these lists is an undefined
 * symbol when libmaskkit.so is linked (-no-undefined): add it to its list
 * and below.  Library-private.
 */
#ifndef MK_GSL_LAZY_H
#define MK_GSL_LAZY_H

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#define MK_GSL_FUNCS(X) \
	X(gsl_matrix_ptr) X(gsl_multifit_nlinear_alloc) \
	X(gsl_multifit_nlinear_default_parameters) X(gsl_multifit_nlinear_free) \
	X(gsl_multifit_nlinear_init) X(gsl_multifit_nlinear_iterate) \
	X(gsl_multifit_nlinear_position) X(gsl_multifit_nlinear_residual) \
	X(gsl_multifit_nlinear_test) X(gsl_set_error_handler_off) X(gsl_strerror) \
	X(gsl_vector_get) X(gsl_vector_memcpy) X(gsl_vector_set) X(gsl_vector_view_array)
/* the method tables, which GSL exports as pointer variables */
#define MK_GSL_VARS(X) \
	X(gsl_multifit_nlinear_solver_cholesky) X(gsl_multifit_nlinear_trs_lm) \
	X(gsl_multifit_nlinear_trust)

/* a pointer to each: the declarations' own types */
struct mk_gsl_api {
#define MK_GSL_MEMBER(f) __typeof__(&f) f;
	MK_GSL_FUNCS(MK_GSL_MEMBER)
	MK_GSL_VARS(MK_GSL_MEMBER)
#undef MK_GSL_MEMBER
};

/* Loads GSL once, with its error handler (which aborts) turned off, and
 * returns that first call's verdict: MK_OK, or MK_ESYS with one line
 * naming the library that could not be loaded.  mk_tisa_fit calls it
 * before any GSL call. */
int mk_gsl_load(void);
/* The table; a call before mk_gsl_load that fails to load stops the
 * process with that line (mk_lazy_need). */
const struct mk_gsl_api *mk_gsl_api(void);

#ifndef MK_GSL_LAZY_TABLE
#define gsl_matrix_ptr (mk_gsl_api()->gsl_matrix_ptr)
#define gsl_multifit_nlinear_alloc (mk_gsl_api()->gsl_multifit_nlinear_alloc)
#define gsl_multifit_nlinear_default_parameters \
	(mk_gsl_api()->gsl_multifit_nlinear_default_parameters)
#define gsl_multifit_nlinear_free (mk_gsl_api()->gsl_multifit_nlinear_free)
#define gsl_multifit_nlinear_init (mk_gsl_api()->gsl_multifit_nlinear_init)
#define gsl_multifit_nlinear_iterate (mk_gsl_api()->gsl_multifit_nlinear_iterate)
#define gsl_multifit_nlinear_position (mk_gsl_api()->gsl_multifit_nlinear_position)
#define gsl_multifit_nlinear_residual (mk_gsl_api()->gsl_multifit_nlinear_residual)
#define gsl_multifit_nlinear_test (mk_gsl_api()->gsl_multifit_nlinear_test)
#define gsl_set_error_handler_off (mk_gsl_api()->gsl_set_error_handler_off)
#define gsl_strerror (mk_gsl_api()->gsl_strerror)
#define gsl_vector_get (mk_gsl_api()->gsl_vector_get)
#define gsl_vector_memcpy (mk_gsl_api()->gsl_vector_memcpy)
#define gsl_vector_set (mk_gsl_api()->gsl_vector_set)
#define gsl_vector_view_array (mk_gsl_api()->gsl_vector_view_array)
#define gsl_multifit_nlinear_solver_cholesky (*mk_gsl_api()->gsl_multifit_nlinear_solver_cholesky)
#define gsl_multifit_nlinear_trs_lm (*mk_gsl_api()->gsl_multifit_nlinear_trs_lm)
#define gsl_multifit_nlinear_trust (*mk_gsl_api()->gsl_multifit_nlinear_trust)
#endif

#endif
