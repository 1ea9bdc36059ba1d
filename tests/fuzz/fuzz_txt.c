/* libFuzzer target: the .txt mask reader (mk_mask_load), with a round trip. */
#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return mk_fuzz_load(data, size, ".txt");
}
