/* maskkit report: the header, and the Markdown template filled in and
 * rendered to HTML with libcmark-gfm (tables extension). */
#include "config.h"
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "report.h"

/* text with each {{name}} replaced by value(name); unknown names are an
 * error naming the template. */
static int rp_fill(const char *tname, const char *text,
		   const char *(*value)(const char *name, size_t len, void *arg), void *arg,
		   char **out, size_t *out_len)
{
	FILE *f = open_memstream(out, out_len);
	const char *p = text;

	if (!f)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (const char *open; (open = strstr(p, "{{"));) {
		const char *close = strstr(open + 2, "}}");
		const char *v;
		if (!close)
			break;
		v = value(open + 2, (size_t)(close - open - 2), arg);
		if (!v) {
			fclose(f);
			free(*out);
			*out = NULL;
			return mk_error_set(MK_EFORMAT, "template '%s': unknown placeholder {{%.*s}}",
					    tname, (int)(close - open - 2), open + 2);
		}
		fwrite(p, 1, (size_t)(open - p), f);
		fputs(v, f);
		p = close + 2;
	}
	fputs(p, f);
	if (fclose(f) != 0)
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

/* The template's leading <!-- comment --> (its own documentation) is not
 * part of the report. */
static const char *rp_skip_comment(const char *text)
{
	const char *end;

	if (strncmp(text, "<!--", 4) != 0 || !(end = strstr(text, "-->")))
		return text;
	end += 3;
	while (*end == '\n')
		end++;
	return end;
}

struct rp_slots {
	const rp_section *s;
	int n;
};

static const char *rp_slot_value(const char *name, size_t len, void *arg)
{
	const struct rp_slots *slots = arg;

	for (int k = 0; k < slots->n; k++)
		if (strlen(slots->s[k].slot) == len && !strncmp(slots->s[k].slot, name, len))
			return slots->s[k].text ? slots->s[k].text : "";
	return NULL;
}

static const char *rp_html_value(const char *name, size_t len, void *arg)
{
	if (len == 4 && !strncmp(name, "body", 4))
		return arg;
	if (len == 5 && !strncmp(name, "title", 5))
		return "maskkit report";
	return NULL;
}

/* Markdown to HTML: GitHub's tables (and strikethrough, autolinks). */
static char *rp_markdown_html(const char *md, size_t len)
{
	static const char *const exts[] = {"table", "strikethrough", "autolink"};
	cmark_parser *p;
	cmark_node *doc;
	char *html = NULL;

	cmark_gfm_core_extensions_ensure_registered();
	p = cmark_parser_new(CMARK_OPT_DEFAULT);
	if (!p)
		return NULL;
	for (size_t k = 0; k < sizeof exts / sizeof *exts; k++) {
		cmark_syntax_extension *e = cmark_find_syntax_extension(exts[k]);
		if (e)
			cmark_parser_attach_syntax_extension(p, e);
	}
	cmark_parser_feed(p, md, len);
	doc = cmark_parser_finish(p);
	if (doc)
		html = cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p));
	if (doc)
		cmark_node_free(doc);
	cmark_parser_free(p);
	return html;
}

int rp_render(report *r, rp_section *sections, int nsections)
{
	struct rp_slots slots = {sections, nsections};
	char *md_t = NULL, *html_t = NULL, *md = NULL, *body = NULL, *html = NULL;
	size_t md_len = 0, html_len = 0;
	int ret = mk_template_read("report.md", &md_t);

	if (!ret)
		ret = mk_template_read("report.html", &html_t);
	if (!ret)
		ret = rp_fill("report.md", rp_skip_comment(md_t), rp_slot_value, &slots, &md, &md_len);
	if (!ret && !(body = rp_markdown_html(md, md_len)))
		ret = mk_error_set(MK_ENOMEM, "cmark-gfm could not render the report");
	if (!ret)
		ret = rp_fill("report.html", html_t, rp_html_value, body, &html, &html_len);
	if (!ret)
		ret = rp_write_file(r, "README.md", md, md_len);
	if (!ret)
		ret = rp_write_file(r, "index.html", html, html_len);
	free(md_t);
	free(html_t);
	free(md);
	free(body);
	free(html);
	return ret;
}

/* ---- the header --------------------------------------------------------------- */

static void rp_gnuplot_version(report *r, char *buf, size_t size)
{
	const char *prog = getenv("MASKKIT_GNUPLOT");
	const char *argv[] = {prog && *prog ? prog : "gnuplot", "--version", NULL};
	char *out = NULL, *cmd = NULL, reason[RP_REASON_MAX];
	bool verbose = r->verbose;

	r->verbose = false;
	if (rp_run_program(r, argv, &out, &cmd, reason, sizeof reason))
		snprintf(buf, size, "not usable (%s)", reason);
	else
		snprintf(buf, size, "%.*s", (int)strcspn(out, "\n"), out);
	r->verbose = verbose;
	free(out);
	free(cmd);
}

void rp_section_header(report *r)
{
	mk_machine m;
	char gp[RP_REASON_MAX + 32];
	int failed = 0;

	mk_machine_describe(&m);
	rp_gnuplot_version(r, gp, sizeof gp);
	for (int k = 0; k < r->nitems; k++)
		failed += !r->items[k]->ok;
	rp_md(r, "Made by **maskkit %s** (commit %s) with ", m.version,
	      m.commit[0] ? m.commit : "unknown");
	rp_md_code(r, r->invocation);
	rp_md(r, ".\n\nMachine: ");
	rp_md_text(r, m.cpu[0] ? m.cpu : "unknown CPU");
	rp_md(r, ", %d threads. gnuplot: ", m.threads);
	rp_md_text(r, gp);
	rp_md(r, ".\n\n");
	if (!failed) {
		rp_md(r, "All %d figures and tables were made.\n\n", r->nitems);
	} else {
		rp_md(r, "> **%d of %d figures and tables could not be made:**\n>\n", failed,
		      r->nitems);
		for (int k = 0; k < r->nitems; k++)
			if (!r->items[k]->ok) {
				rp_md(r, "> - `%s` (%s): ", r->items[k]->file, r->items[k]->section);
				rp_md_text(r, r->items[k]->reason);
				rp_md(r, "\n");
			}
		rp_md(r, "\n");
	}
}
