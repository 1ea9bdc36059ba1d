/* libpng's default handlers print to stderr and abort; the library must do
 * neither.  These keep the message and unwind to the caller's setjmp: pass a
 * char[MK_PNG_MSG] as the error pointer of png_create_write_struct. */
#ifndef MK_PNG_QUIET_H
#define MK_PNG_QUIET_H

#include <png.h>

#define MK_PNG_MSG 200

void mk_png_quiet_error(png_structp png, png_const_charp msg);
void mk_png_quiet_warning(png_structp png, png_const_charp msg);

#endif
