/* libFuzzer target: the .h5 mask reader (mk_mask_load), with a round trip.
 * Linked with h5_asan.c (see there). */
#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return mk_fuzz_load(data, size, ".h5");
}
