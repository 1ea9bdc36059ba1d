/*
 * maskkit core: status codes and error messages, sizes and limits, data
 * types and the version; every other header includes it.
 *
 * Every function that can fail returns MK_OK (0) or a negative MK_E* status
 * and leaves a one-line message for mk_error().  The library never prints
 * and never exits.
 *
 * Freeing, one vocabulary everywhere:
 *   mk_X_free(p)     frees an object the library allocated and handed out by
 *                    pointer (mk_mask_free(mk_mask *)); p is invalid after it.
 *   mk_X_release(s)  frees what a struct the caller owns holds (a result
 *                    filled in on the caller's stack: mk_tensor_release(&t))
 *                    and zeroes it; the struct itself is never freed.
 *   mk_X_close(h)    ends a handle made by mk_X_open (an open file).
 * All three take NULL; _release also takes a zeroed struct, so a result
 * declared `= {0}` can be released on every path.
 */
#ifndef MK_CORE_H
#define MK_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* pid_t */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors --------------------------------------------------- */

enum {
	MK_OK = 0,
	MK_ENOMEM = -1,   /* allocation failed */
	MK_EINVAL = -2,   /* bad argument, parameter or expression (user error) */
	MK_EIO = -3,      /* a file cannot be opened or created: missing, no permission, bad path */
	MK_EFORMAT = -4,  /* a file's contents are malformed */
	MK_ERANGE = -5,   /* a size is too large or overflows (user error) */
	MK_EGPU = -6,     /* a GPU call failed */
	MK_EINTERNAL = -7, /* a bug */
	MK_ESYS = -8       /* the system failed: a write or read error, a full disk */
};

const char *mk_status_str(int status);
/* The last message set by mk_error_set() in this thread ("" if none). */
const char *mk_error(void);
/* Sets this thread's message and returns status, so error paths read
 * `return mk_error_set(MK_EINVAL, "n must be positive, got %lld", n);` */
int mk_error_set(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A structured error: the status and message mk_error_set() gave, the
 * library parameter at fault (an options struct's field, "max_memory",
 * "backend"; the CLI maps it to its flag) and the file, when known. */
typedef struct mk_error_info {
	int status;
	const char *param;   /* NULL: none named */
	const char *file;    /* NULL: none named */
	const char *message; /* mk_error() */
} mk_error_info;
const mk_error_info *mk_error_get(void);
/* Adds context before the current message ("'model.h5': " + message)
 * without cutting it; returns the current status. */
int mk_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Names the parameter at fault in the current error and appends
 * " (param)" to its message, so that a C caller reads which field of its
 * options to change; returns the current status.  The CLI shows the flag
 * instead ("(max_memory)" becomes "(--max-memory)").  param is copied
 * (at most 63 bytes).  An error names one parameter: a second call replaces
 * the first one's (and its " (param)" when that ends the message); NULL
 * names none, for a caller that set the callee's parameter itself. */
int mk_error_param(const char *param);
/* Names the file at fault (copied); returns the current status. */
int mk_error_file(const char *path);
/* True for statuses caused by user input (exit code 2 in the CLI). */
bool mk_status_is_user(int status);
/* The status for an OS error number: MK_ESYS when the machine failed (a full
 * disk or quota, a file too large for a limit, an I/O error, no memory or no
 * file handles or processes left, a stale or timed-out network file: exit
 * 1), MK_EIO when the path given is wrong (missing,
 * not permitted, a directory, read-only: exit 2). */
int mk_status_from_errno(int err);
/* mk_error_set(mk_status_from_errno(err), "<fmt>: <strerror(err)>"). */
int mk_error_errno(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Removes the temporary files of writes in progress (so that an interrupted
 * write leaves the old file and nothing else) and sends sig to the programs
 * the library runs (gnuplot).  Async-signal-safe: for a handler of SIGINT,
 * SIGTERM or SIGHUP that then restores the default action and raises the
 * signal again. */
void mk_cleanup_run(int sig);

/* A child process the caller started (fork/exec, posix_spawn) registered
 * for mk_cleanup_run, which then sends it the signal: returns a token for
 * mk_cleanup_wait_child, or -1 when the table is full (the child is then
 * not signalled).  mk_cleanup_wait_child is waitpid(pid, status, 0) that
 * gives the token back before the child is reaped (so a signal never goes
 * to a reused pid); -1 with errno on failure. */
int mk_cleanup_push_child(pid_t pid);
int mk_cleanup_wait_child(int token, pid_t pid, int *status);

/* ---- random numbers: xoshiro256** seeded by splitmix64 ------------------
 * The generator behind every seeded pattern (random, bigbird's random keys)
 * and pruning's Gumbel noise: the same (seed, tag, index) gives the same
 * stream on every machine, so a caller can draw numbers that agree with
 * the library's. */
typedef struct mk_rng {
	uint64_t s[4];
} mk_rng;
/* Seeds r from (seed, tag, index): each row or sample its own stream. */
void mk_rng_seed(mk_rng *r, uint64_t seed, uint64_t tag, uint64_t index);
/* The next 64 random bits. */
uint64_t mk_rng_next(mk_rng *r);
/* Uniform in [0, bound), unbiased (Lemire's multiply-and-reject), bound > 0. */
uint64_t mk_rng_below(mk_rng *r, uint64_t bound);
/* Two independent standard normals (Box-Muller on uniforms in (0, 1)). */
void mk_rng_normal2(mk_rng *r, double z[2]);

/* How many OpenBLAS threads fit under the address-space limit (ulimit -v)
 * next to the program itself: at most want, at least 1 (want when there is
 * no limit).  Each takes a work buffer of about 128 MiB, and OpenBLAS
 * retries for ever when it cannot get it. */
int mk_blas_threads_fit(int want);

/* ---- sizes --------------------------------------------------------------- */

#define MK_N_MAX ((int64_t)1 << 20)             /* largest n anywhere */
#define MK_DEFAULT_MAX_MEMORY ((uint64_t)4 << 30) /* 4 GiB */

/* Words in one packed row of n bits. */
static inline size_t mk_words(int64_t n) { return (size_t)((n + 63) / 64); }
/* Checks 0 < n <= MK_N_MAX, with a message naming `what`. */
int mk_check_n(int64_t n, const char *what);
/* *out = a * b, or MK_ERANGE on overflow. */
int mk_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
/* MK_ERANGE with a clear message naming the parameter max_memory
 * (mk_error_param) when `bytes` exceeds `limit` (0 = MK_DEFAULT_MAX_MEMORY). */
int mk_check_memory(uint64_t bytes, uint64_t limit, const char *what);
/* Parses "4G", "512M", "1024" (bytes); K/M/G/T are powers of 1024. */
int mk_parse_size(const char *s, uint64_t *out);

/* Progress of a long computation: called with (units done, units). */
typedef void (*mk_progress_fn)(int64_t rows_done, int64_t n, void *arg);

/* ---- data types ----------------------------------------------------------- */

/* The element type of stored data: a tensor's, a data set's, indicators'. */
typedef enum mk_dtype {
	MK_DTYPE_NONE = 0,
	MK_DTYPE_F32 = 1, MK_DTYPE_F64, MK_DTYPE_F16,
	MK_DTYPE_BOOL,
	MK_DTYPE_I8, MK_DTYPE_I16, MK_DTYPE_I32, MK_DTYPE_I64,
	MK_DTYPE_U8, MK_DTYPE_U16, MK_DTYPE_U32, MK_DTYPE_U64,
	MK_DTYPE_ENUM16, MK_DTYPE_ENUM32, MK_DTYPE_ENUM64,   /* HDF5 enums wider than a byte */
	MK_DTYPE_BITS8, MK_DTYPE_BITS16, MK_DTYPE_BITS32, MK_DTYPE_BITS64 /* HDF5 bitfields */
} mk_dtype;

/* "float32", "float64", "float16", "bool", "int8" ... "uint64", "enum16",
 * "bitfield8" ...; "none" for MK_DTYPE_NONE or a value outside the enum. */
const char *mk_dtype_name(mk_dtype d);

/* ---- version -------------------------------------------------------------- */
const char *mk_version(void);

/* Frees what the library malloc'd for a caller that has no free() of the
 * same C runtime at hand (a binding): mk_expr_flex_py's text. */
void mk_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* MK_CORE_H */
