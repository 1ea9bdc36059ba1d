/*
 * maskkit results as data: a result is described once, as a table of fields
 * (name, type, unit, what it is), the way options are; one emitter writes any
 * described result as the terminal's text, an aligned table, CSV or JSON.
 *
 * A record describes a C struct: each field names a member by its offset.
 * Nested structs (MK_FT_OBJ), pointers to them (MK_FT_PTR), arrays of them
 * (MK_FT_LIST) and arrays of numbers (MK_FT_REALS, MK_FT_I64S) are JSON's
 * objects and arrays; text shows nested fields as "outer.inner", tables and
 * CSV carry the scalar fields only (nested objects' flattened, lists left
 * out).
 */
#ifndef MK_RESULT_H
#define MK_RESULT_H

#include <stddef.h>
#include <stdio.h>
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mk_ftype {
	MK_FT_I64,   /* int64_t */
	MK_FT_U64,   /* uint64_t */
	MK_FT_INT,   /* int */
	MK_FT_REAL,  /* double; NaN and infinities are absent (JSON null, CSV empty) */
	MK_FT_STR,   /* const char *; NULL is absent */
	MK_FT_BOOL,  /* bool: "yes"/"no" in text, true/false in JSON and CSV */
	MK_FT_OBJ,   /* a struct described by sub, at offset */
	MK_FT_PTR,   /* a pointer to a struct described by sub; NULL is absent */
	MK_FT_LIST,  /* a pointer to count_offset's int64_t structs of sub->size bytes */
	MK_FT_REALS, /* a const double * of count_offset's int64_t values */
	MK_FT_I64S,  /* a const int64_t * of count_offset's int64_t values */
	MK_FT_CHARS, /* a char array in the struct, NUL-terminated (a string held in place) */
	MK_FT_STRS,  /* a const char *const * of count_offset's int64_t strings: a JSON
		      * array, one cell of the strings separated by spaces elsewhere */
} mk_ftype;

enum {
	MK_FF_OMIT = 1u << 0,  /* absent: left out of JSON (else null) and of text; a table's
				* column (one under an MK_FF_OMIT object too) absent in every
				* row is left out (CSV keeps it) */
	MK_FF_JSON = 1u << 1,  /* JSON only */
	MK_FF_TEXT = 1u << 2,  /* text and tables only (not JSON or CSV) */
	MK_FF_NOTEXT = 1u << 5, /* JSON and CSV only (not text or tables) */
	MK_FF_EXACT = 1u << 3, /* MK_FT_U64 written as an exact JSON integer (above 2^53) */
	MK_FF_NOCSV = 1u << 4, /* not a CSV column */
	MK_FF_NOJSON = 1u << 6, /* text, tables and CSV only (not JSON) */
	/* With MK_FF_OMIT: only `present` leaves the field out; a value absent
	 * by its type's rule (NaN, NULL) is null. */
	MK_FF_KEEP_NULL = 1u << 7,
	/* MK_FT_LIST in JSON: each element is the value of its record's first
	 * field, not an object (an array of arrays).  Not in text or tables. */
	MK_FF_BARE = 1u << 8,
	/* MK_FT_LIST in JSON: an object; each element's first field (a string)
	 * is the key of its second field's value.  Not in text or tables. */
	MK_FF_KEYED = 1u << 9,
	MK_FF_NOTABLE = 1u << 10, /* not a column of aligned tables (MK_EMIT_TABLE) */
	MK_FF_NOLINE = 1u << 11,  /* not a line of text (MK_EMIT_TEXT): with MK_FF_TEXT, a
				   * column of aligned tables only */
};

struct mk_record;

typedef struct mk_field {
	const char *name;   /* JSON key and CSV column */
	mk_ftype type;
	size_t offset;      /* of the member in the record's struct */
	const char *unit;   /* shown after the value in text ("s", "MiB"), or NULL */
	const char *help;   /* what it is, one line (documentation; text's note) */
	const char *label;  /* text's and tables' name when not name, or NULL */
	const char *fmt;    /* printf format of a number in text and tables, or NULL */
	const char *csv_fmt; /* printf format of a number in CSV, or NULL (fmt for
			      * integers; %.17g, exact, for reals); a bool's is given 1 or 0 */
	unsigned flags;     /* MK_FF_* */
	const struct mk_record *sub; /* OBJ, PTR, LIST */
	size_t count_offset;         /* LIST, REALS, I64S: offset of the int64_t count */
	/* When set, the field is absent where it returns false (else the type's
	 * own rule: NaN, NULL). */
	bool (*present)(const void *rec);
	/* When set, text and tables show what it writes in buf (a value made of
	 * several members, "512 x 384"), JSON and CSV the member. */
	void (*show)(const void *rec, char *buf, size_t cap);
} mk_field;

/* A record: the fields of one struct of size bytes. */
typedef struct mk_record {
	const char *name;
	const mk_field *fields;
	size_t count;
	size_t size;
} mk_record;

/* A field of struct S's member m: {MK_FIELD(S, m, "name", MK_FT_REAL), .unit = ...}. */
#define MK_FIELD(S, m, name_, type_) .name = (name_), .type = (type_), .offset = offsetof(S, m)
#define MK_RECORD(name_, S, fields_)                                                         \
	{ .name = (name_), .fields = (fields_), .count = sizeof(fields_) / sizeof((fields_)[0]), \
	  .size = sizeof(S) }

typedef enum mk_emit_fmt {
	MK_EMIT_TEXT,  /* one "label  value unit  (help)" line per field, records apart */
	MK_EMIT_TABLE, /* a header and one aligned line per record */
	MK_EMIT_CSV,   /* a header and one line per record (RFC 4180) */
	MK_EMIT_JSON,  /* an object for one record, an array for several (indented) */
} mk_emit_fmt;

enum {
	MK_EMIT_ARRAY = 1u << 0,   /* JSON: an array even for one record */
	MK_EMIT_NO_HEAD = 1u << 1, /* TABLE, CSV: no header line */
	MK_EMIT_NO_NOTE = 1u << 2, /* TEXT: no "(help)" after values */
	MK_EMIT_COMPACT = 1u << 3, /* JSON: each record on one line, unindented (an array
				    * of several: "[", a line each, "]") */
};

/* Writes count records (rows: count structs of r->size bytes) to f.
 * MK_ESYS on a write error, MK_ENOMEM. */
int mk_emit(FILE *f, mk_emit_fmt fmt, const mk_record *r, const void *rows, size_t count,
	    unsigned flags);
/* The same to path, atomically ("-": standard output). */
int mk_emit_path(const char *path, mk_emit_fmt fmt, const mk_record *r, const void *rows,
		 size_t count, unsigned flags);
/* The JSON text of the records (malloc'd; NULL: out of memory), as mk_emit
 * writes it less the final newline. */
char *mk_emit_json_text(const mk_record *r, const void *rows, size_t count, unsigned flags);
/* A record's fields, one "name  type  unit  help" line each, nested ones
 * indented: what a result holds, for documentation and --help. */
int mk_record_describe(FILE *f, const mk_record *r);

#ifdef __cplusplus
}
#endif
#endif /* MK_RESULT_H */
