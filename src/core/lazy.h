/* Libraries loaded on first use (dlopen) rather than linked: HDF5, MPI and
 * OpenBLAS each cost milliseconds and dozens of libraries at every start,
 * and most commands need none of them (docs/performance.md, "Start-up").
 * Library-private. */
#ifndef MK_LAZY_H
#define MK_LAZY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* A lazily loaded library: what it is for messages, the files tried in
 * turn (sonames, then configure's paths; NULL-terminated) and how. */
typedef struct mk_lazy_lib {
	const char *what;          /* "HDF5" */
	const char *const *files;  /* NULL-terminated */
	int flags;                 /* dlopen's: RTLD_NOW, | RTLD_GLOBAL for MPI */
} mk_lazy_lib;

/* A module's loading, done once: its verdict and message, kept for every
 * later call (mk_error() is per thread). */
typedef struct mk_lazy_state {
	pthread_once_t once;
	int status; /* MK_OK (0) unless the loading failed */
	char message[512];
} mk_lazy_state;
#define MK_LAZY_STATE_INIT {PTHREAD_ONCE_INIT, 0, ""}

/* Runs fill once (it loads the library and fills the module's table, and
 * calls mk_lazy_failed when it cannot) and returns its verdict: MK_OK, or
 * the failure's status with its message set again in this thread. */
int mk_lazy_load(mk_lazy_state *s, void (*fill)(void));
/* Records the current error (mk_error()) as s's verdict. */
void mk_lazy_failed(mk_lazy_state *s);
/* mk_lazy_load for a call that has no status to return it through (a
 * table used before its module's entry point loaded it, a cblas
 * function): on failure prints the one line and stops the process, rather
 * than jump to NULL. */
void mk_lazy_need(mk_lazy_state *s, void (*fill)(void));

/* The handle of the first of lib->files that loads, and in *file its name;
 * NULL after setting MK_ESYS with one line naming what failed to load and
 * why (dlerror's reason for the first file). */
void *mk_lazy_open(const mk_lazy_lib *lib, const char **file);
/* Whether one of files is loaded in this process already (RTLD_NOLOAD). */
bool mk_lazy_loaded(const char *const *files);
/* The address of symbol `name` in handle; NULL after setting MK_ESYS naming
 * the symbol and file (a library older than the one maskkit was built for). */
void *mk_lazy_sym(void *handle, const char *file, const char *name);

/* The address of variable `name`: when the library was in the process
 * before mk_lazy_open (`preloaded`), the one the process's global scope
 * resolves to, since a program that uses the variable itself holds a copy
 * of it (a copy relocation) that the library then uses, not its own. */
void *mk_lazy_var(void *handle, const char *file, const char *name, bool preloaded);

#define MK_LAZY_STR_(x) #x
/* The symbol's name after macro expansion (API-version macros). */
#define MK_LAZY_STR(x) MK_LAZY_STR_(x)

#endif
