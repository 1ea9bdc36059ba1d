/*
 * Libraries loaded on first use.  Each module that loads one (src/io's
 * HDF5, src/par's MPI, src/core's OpenBLAS) keeps a table of the functions
 * it calls, filled once; these helpers only open and look up, and put what
 * failed into one line a user can act on.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "config.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "core.h"
#include "lazy.h"

int mk_lazy_load(mk_lazy_state *s, void (*fill)(void))
{
	pthread_once(&s->once, fill);
	return s->status ? mk_error_set(s->status, "%s", s->message) : MK_OK;
}

void mk_lazy_failed(mk_lazy_state *s)
{
	s->status = mk_error_get()->status ? mk_error_get()->status : MK_ESYS;
	snprintf(s->message, sizeof s->message, "%s", mk_error());
}

void mk_lazy_need(mk_lazy_state *s, void (*fill)(void))
{
	if (mk_lazy_load(s, fill)) {
		fprintf(stderr, "maskkit: %s\n", s->message);
		abort();
	}
}

void *mk_lazy_open(const mk_lazy_lib *lib, const char **file)
{
	char first[512] = "";
	void *h;

	for (const char *const *f = lib->files; *f; f++) {
		if (!**f)
			continue;
		if ((h = dlopen(*f, lib->flags))) {
			*file = *f;
			return h;
		}
		if (!first[0]) {
			const char *why = dlerror();
			snprintf(first, sizeof first, "%s", why ? why : *f);
		}
	}
	*file = NULL;
	mk_error_set(MK_ESYS, "cannot load %s, which this command needs: %s", lib->what,
		     first[0] ? first : "no library named at configure time");
	return NULL;
}

bool mk_lazy_loaded(const char *const *files)
{
	for (const char *const *f = files; *f; f++) {
		void *h = **f ? dlopen(*f, RTLD_NOW | RTLD_NOLOAD) : NULL;
		if (h) {
			dlclose(h); /* drops the reference NOLOAD took */
			return true;
		}
	}
	return false;
}

void *mk_lazy_var(void *handle, const char *file, const char *name, bool preloaded)
{
	void *p = preloaded ? dlsym(RTLD_DEFAULT, name) : NULL;

	return p ? p : mk_lazy_sym(handle, file, name);
}

void *mk_lazy_sym(void *handle, const char *file, const char *name)
{
	void *p;

	dlerror();
	p = dlsym(handle, name);
	if (!p)
		mk_error_set(MK_ESYS, "%s lacks %s (older than the one maskkit was built for?)",
			     file, name);
	return p;
}
