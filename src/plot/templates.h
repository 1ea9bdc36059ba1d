/* The gnuplot templates compiled into the library (src/templates.c is
 * generated from the .gp files in templates/ by templates/embed.sh). */
#ifndef MK_TEMPLATES_H
#define MK_TEMPLATES_H

struct mk_template {
	const char *name; /* file name without .gp */
	const char *text;
};

/* Ends with {NULL, NULL}. */
extern const struct mk_template mk_templates[];

#endif
