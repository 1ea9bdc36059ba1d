/* JSON inputs read one way everywhere (json_strict.c). */
#ifndef MK_JSON_STRICT_H
#define MK_JSON_STRICT_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Parses text[0..len) (NUL-terminated at len) of file into *out, refusing
 * with one line (MK_EFORMAT) what JSON readers disagree on: a key twice in
 * one object (cJSON takes the first, Python the last), text after the
 * value, a NUL byte. */
int mk_json_parse_strict(const char *file, const char *text, size_t len, cJSON **out);

#endif
