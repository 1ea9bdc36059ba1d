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

/* The size of mk_error()'s buffer (error.c): a message must fit in it. */
#define MK_FUZZ_MAX_MESSAGE 512

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

/* The file targets' helpers (fuzz_load.c, which also defines
 * LLVMFuzzerInitialize: it makes this process's private temporary
 * directory). */

/* Writes data to the file "in<ext>" (ext ".json", ".h5", ...) in the
 * private directory and returns its path, valid until the next call. */
const char *mk_fuzz_input(const uint8_t *data, size_t size, const char *ext);

/* Checks what a call that returned status (not MK_OK) left in mk_error():
 * a message, one line, that fits the buffer.  call names the function. */
void mk_fuzz_check_error(int status, const char *call);

/* Writes the input with mk_fuzz_input, loads it with mk_mask_load and, when
 * that succeeds, checks that writing the mask back in the same format and
 * loading it again gives the same mask. */
int mk_fuzz_load(const uint8_t *data, size_t size, const char *ext);

#endif
