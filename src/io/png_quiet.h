/* libpng's default handlers print to stderr and abort; the library must do
 * neither.  These keep the message and unwind to the caller's setjmp: pass a
 * char[MK_PNG_MSG] as the error pointer of png_create_write_struct. */
#ifndef MK_PNG_QUIET_H
#define MK_PNG_QUIET_H

#include <png.h>
#include <stdio.h>

#define MK_PNG_MSG 200

void mk_png_quiet_error(png_structp png, png_const_charp msg);
void mk_png_quiet_warning(png_structp png, png_const_charp msg);

/* Streams the picture to f (instead of png_init_io) through a writer that
 * keeps the OS's reason when a write fails (a full disk). */
void mk_png_set_file(png_structp png, FILE *f);
/* The status after libpng unwound with msg: MK_ESYS or MK_EIO with the
 * OS's reason when a write failed, else MK_ESYS "PNG: msg". */
int mk_png_fail(const char *msg);

#endif
