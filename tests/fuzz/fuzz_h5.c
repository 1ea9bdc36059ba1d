/* libFuzzer target: the .h5 mask reader (mk_mask_load), with a round trip. */
#include "config.h"
#include "fuzz.h"

/* libhdf5 1.10 mallocs whatever size a corrupt object header claims (up to
 * 2^64 bytes, in H5C_protect) and fails cleanly when malloc returns NULL;
 * ASan would stop at the first such call instead of looking further.  The
 * ASAN_OPTIONS environment variable still overrides this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return mk_fuzz_load(data, size, ".h5");
}
