/* A growable string for text the library builds: expression texts, mask_mods. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"

void mk_sb_vprintf(mk_sb *b, const char *fmt, va_list ap)
{
	va_list again;
	int len;

	if (b->err)
		return;
	va_copy(again, ap);
	len = vsnprintf(NULL, 0, fmt, ap);
	if (len < 0 || b->len + (size_t)len + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 64) + (size_t)(len < 0 ? 0 : len);
		char *s = len < 0 ? NULL : realloc(b->s, cap);
		if (!s) {
			b->err = 1;
			va_end(again);
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, again);
	va_end(again);
	b->len += (size_t)len;
}

void mk_sb_printf(mk_sb *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mk_sb_vprintf(b, fmt, ap);
	va_end(ap);
}

char *mk_sb_take(mk_sb *b)
{
	char *s = b->s;

	if (b->err || !s) {
		free(s);
		s = NULL;
	}
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}
