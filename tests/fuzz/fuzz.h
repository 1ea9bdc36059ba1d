/* Shared by the libFuzzer targets in tests/fuzz (built with --enable-fuzz). */
#ifndef MK_FUZZ_H
#define MK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Inputs are untrusted: cap what any one of them may make the library hold,
 * so a header claiming a huge n is rejected rather than exhausting the
 * fuzzer's RSS limit. */
#define MK_FUZZ_MAX_MEMORY ((uint64_t)64 << 20)

/* libFuzzer's entry points; declared here for -Wmissing-prototypes. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failed invariant is a finding: print it and abort so libFuzzer saves
 * the input. */
#define MK_FUZZ_CHECK(cond, ...)                                                     \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d): ", #cond,  \
				__FILE__, __LINE__);                                 \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
			abort();                                                     \
		}                                                                    \
	} while (0)

/* Writes data to a file with extension ext (".json", ...) in this process's
 * private temporary directory, loads it with mk_mask_load and, when that
 * succeeds, checks that writing the mask back in the same format and
 * loading it again gives the same mask. */
int mk_fuzz_load(const uint8_t *data, size_t size, const char *ext);

#endif
