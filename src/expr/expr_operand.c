/*
 * Operands as commands and pipelines take them: a mask file or an
 * expression, and one bound at the size of the tensors it masks.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tensor.h"

int mk_expr_operand(const char *arg, mk_expr **out)
{
	struct stat st;
	size_t flen = mk_tensor_file_len(arg);
	char *file = strndup(arg, flen);
	bool is_file;

	if (!file)
		return mk_error_set(MK_ENOMEM, "out of memory");
	/* a file named like a pattern ("causal") must not shadow the pattern;
	 * FILE.h5:/path is the file's dataset */
	is_file = (strchr(file, '/') || mk_format_from_path(file) != MK_FMT_NONE) &&
		  !strpbrk(arg + flen, " \t|&+()~!") && stat(file, &st) == 0 &&
		  S_ISREG(st.st_mode);
	free(file);
	if (is_file)
		return mk_expr_file(arg, out);
	return mk_expr_parse(arg, out);
}

static void expr_size_text(int64_t n, int64_t kv, char *buf, size_t cap)
{
	if (n == kv)
		snprintf(buf, cap, "n = %" PRId64, n);
	else
		snprintf(buf, cap, "%" PRId64 " x %" PRId64 " (q_len x kv_len)", n, kv);
}

int mk_expr_operand_bound(const char *spec, const mk_bind_opts *bind, int64_t n, int64_t kv,
			  mk_expr **e)
{
	mk_bind_opts b = *bind;
	char have[64], want[64];
	int ret;

	if ((ret = mk_expr_operand(spec, e)))
		return ret;
	b.n = 0;
	b.kv_len = 0;
	if (mk_expr_bind(*e, &b) == MK_OK) {
		if (mk_expr_n(*e) == n && mk_expr_kv_len(*e) == kv)
			return MK_OK;
		expr_size_text(mk_expr_n(*e), mk_expr_kv_len(*e), have, sizeof have);
		expr_size_text(n, kv, want, sizeof want);
		return mk_error_set(MK_EINVAL, "the mask '%s' has %s but the tensors need %s", spec,
				    have, want);
	}
	mk_expr_free(*e);
	*e = NULL;
	if ((ret = mk_expr_operand(spec, e)))
		return ret;
	b.n = n;
	b.kv_len = kv;
	return mk_expr_bind(*e, &b);
}
