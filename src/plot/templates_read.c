/*
 * The compiled-in templates read by name (mk_template_read, public in
 * plot.h): gnuplot's are run by gnuplot.c, the report's Markdown and HTML
 * are filled in by the program.  MASKKIT_TEMPLATES=DIR reads DIR's copy
 * instead, so a template can be edited and tried without a rebuild.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "plot_internal.h"
#include "templates.h"

#define MK_TEMPLATE_MAX (1u << 20) /* the largest is a few kilobytes */

int mk_template_read(const char *name, char **text)
{
	const char *dir = getenv("MASKKIT_TEMPLATES");
	size_t len;

	*text = NULL;
	if (!name || !*name || strchr(name, '/'))
		return mk_error_set(MK_EINVAL, "bad template name '%s'", name ? name : "");
	if (dir && *dir) {
		char path[4096];
		/* embed.sh names a gnuplot template without its .gp */
		if ((size_t)snprintf(path, sizeof path, "%s/%s%s", dir, name,
				     strchr(name, '.') ? "" : ".gp") >= sizeof path)
			return mk_error_set(MK_EINVAL, "MASKKIT_TEMPLATES '%s' is too long", dir);
		return mk_file_read(path, MK_TEMPLATE_MAX, "a template (MASKKIT_TEMPLATES)",
				    MK_FILE_TEXT, text, &len);
	}
	for (const struct mk_template *t = mk_templates; t->name; t++)
		if (!strcmp(t->name, name))
			return (*text = strdup(t->text)) ? MK_OK
							 : mk_error_set(MK_ENOMEM, "out of memory");
	return mk_error_set(MK_EINVAL, "no built-in template '%s'", name);
}
