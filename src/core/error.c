/* Status codes, the thread-local error message and checked size arithmetic. */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Long enough that context added in front (mk_error_prefix) does not cut a
 * message in practice; a message is still one line. */
#define MK_ERRBUF 4096
#define MK_ERRFILE 1024
#define MK_ERRPARAM 64
static _Thread_local char mk_errbuf[MK_ERRBUF];
static _Thread_local char mk_errfile[MK_ERRFILE];
static _Thread_local char mk_errparam[MK_ERRPARAM];
static _Thread_local mk_error_info mk_errinfo;

const char *mk_status_str(int status)
{
	switch (status) {
	case MK_OK: return "ok";
	case MK_ENOMEM: return "out of memory";
	case MK_EINVAL: return "invalid argument";
	case MK_EIO: return "input/output error";
	case MK_EFORMAT: return "malformed file";
	case MK_ERANGE: return "size out of range";
	case MK_EGPU: return "GPU error";
	case MK_EINTERNAL: return "internal error";
	case MK_ESYS: return "system error";
	default: return "unknown status";
	}
}

const char *mk_error(void)
{
	return mk_errbuf;
}

/* Names and values come from files and arguments: keep the message one
 * line of printable text whatever they hold. */
static void err_printable(char *c)
{
	for (; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

int mk_error_set(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(mk_errbuf, sizeof mk_errbuf, fmt, ap);
	va_end(ap);
	err_printable(mk_errbuf);
	mk_errinfo = (mk_error_info){.status = status, .message = mk_errbuf};
	return status;
}

const mk_error_info *mk_error_get(void)
{
	mk_errinfo.message = mk_errbuf;
	return &mk_errinfo;
}

int mk_error_prefix(const char *fmt, ...)
{
	char head[MK_ERRBUF];
	size_t hlen, mlen = strlen(mk_errbuf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof head, fmt, ap);
	va_end(ap);
	err_printable(head);
	hlen = strlen(head);
	if (hlen + mlen >= sizeof mk_errbuf) /* only past 4 KiB: the message's end goes */
		mlen = sizeof mk_errbuf - 1 > hlen ? sizeof mk_errbuf - 1 - hlen : 0;
	memmove(mk_errbuf + hlen, mk_errbuf, mlen);
	memcpy(mk_errbuf, head, hlen);
	mk_errbuf[hlen + mlen] = '\0';
	return mk_errinfo.status;
}

int mk_error_param(const char *param)
{
	size_t len = strlen(mk_errbuf), tlen;
	char tail[MK_ERRPARAM + 4];

	/* one parameter an error: a caller's own replaces the one it called named */
	if (mk_errinfo.param) {
		snprintf(tail, sizeof tail, " (%s)", mk_errinfo.param);
		tlen = strlen(tail);
		if (len >= tlen && !strcmp(mk_errbuf + len - tlen, tail))
			mk_errbuf[len -= tlen] = '\0';
		mk_errinfo.param = NULL;
	}
	if (!param)
		return mk_errinfo.status;
	snprintf(mk_errparam, sizeof mk_errparam, "%s", param);
	mk_errinfo.param = mk_errparam;
	snprintf(mk_errbuf + len, sizeof mk_errbuf - len, " (%s)", mk_errparam);
	return mk_errinfo.status;
}

int mk_error_file(const char *path)
{
	snprintf(mk_errfile, sizeof mk_errfile, "%s", path);
	mk_errinfo.file = mk_errfile;
	return mk_errinfo.status;
}

bool mk_status_is_user(int status)
{
	return status == MK_EINVAL || status == MK_EFORMAT || status == MK_ERANGE ||
	       status == MK_EIO;
}

int mk_status_from_errno(int err)
{
	switch (err) {
	case ENOSPC: case EDQUOT: case EFBIG: case EIO: case ENOMEM: case EMFILE: case ENFILE:
	case EAGAIN: case ENOBUFS: case ESTALE: case ETIMEDOUT:
		return MK_ESYS;
	default:
		return MK_EIO;
	}
}

int mk_error_errno(int err, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	if (err == 0) /* a stream in error whose call did not say why */
		err = EIO;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return mk_error_set(mk_status_from_errno(err), "%s: %s", what, strerror(err));
}

const char *mk_version(void)
{
	return PACKAGE_VERSION;
}

void mk_free(void *p)
{
	free(p);
}

int mk_check_n(int64_t n, const char *what)
{
	if (n <= 0)
		return mk_error_set(MK_EINVAL, "%s must be positive, got %" PRId64, what, n);
	if (n > MK_N_MAX)
		return mk_error_set(MK_ERANGE, "%s = %" PRId64 " is too large (at most %" PRId64 ")",
				    what, n, MK_N_MAX);
	return MK_OK;
}

int mk_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return mk_error_set(MK_ERANGE, "size %" PRIu64 " x %" PRIu64 " overflows", a, b);
	*out = a * b;
	return MK_OK;
}

void mk_format_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

int mk_check_memory(uint64_t bytes, uint64_t limit, const char *what)
{
	char need[32], cap[32];
	if (limit == 0)
		limit = MK_DEFAULT_MAX_MEMORY;
	if (bytes <= limit)
		return MK_OK;
	mk_format_bytes(bytes, need, sizeof need);
	mk_format_bytes(limit, cap, sizeof cap);
	mk_error_set(MK_ERANGE, "%s would need %s, over the memory limit of %s", what, need, cap);
	return mk_error_param("max_memory");
}

int mk_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;
	if (!s || !*s || *s == '-' || *s == '+')
		return mk_error_set(MK_EINVAL, "bad size '%s'", s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return mk_error_set(MK_EINVAL, "bad size '%s'", s);
	switch (*end) {
	case 'k': case 'K': mult = (uint64_t)1 << 10; end++; break;
	case 'm': case 'M': mult = (uint64_t)1 << 20; end++; break;
	case 'g': case 'G': mult = (uint64_t)1 << 30; end++; break;
	case 't': case 'T': mult = (uint64_t)1 << 40; end++; break;
	default: break;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return mk_error_set(MK_EINVAL, "bad size '%s' (use e.g. 512M or 4G)", s);
	if (mk_mul_u64(v, mult, out))
		return mk_error_set(MK_ERANGE, "size '%s' overflows", s);
	return MK_OK;
}
