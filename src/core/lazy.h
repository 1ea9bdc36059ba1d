/* Libraries loaded on first use (dlopen) rather than linked: HDF5, MPI and
 * OpenBLAS each cost milliseconds and dozens of libraries at every start,
 * and most commands need none of them (docs/performance.md, "Start-up").
 * Library-private. */
#ifndef MK_LAZY_H
#define MK_LAZY_H

#include <stdbool.h>
#include <stddef.h>

/* A lazily loaded library: what it is for messages, the files tried in
 * turn (sonames, then configure's paths; NULL-terminated) and how. */
typedef struct mk_lazy_lib {
	const char *what;          /* "HDF5" */
	const char *const *files;  /* NULL-terminated */
	int flags;                 /* dlopen's: RTLD_NOW, | RTLD_GLOBAL for MPI */
} mk_lazy_lib;

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
