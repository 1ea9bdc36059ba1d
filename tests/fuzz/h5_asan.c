/*
 * ASan settings for the targets that read HDF5 files (fuzz_h5,
 * fuzz_weights).  libhdf5 1.10 mallocs whatever size a corrupt object
 * header claims (up to 2^64 bytes, in H5C_protect) and fails cleanly when
 * malloc returns NULL; ASan would stop at the first such call instead of
 * looking further.  The ASAN_OPTIONS environment variable still overrides
 * this.
 */
#include "config.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
