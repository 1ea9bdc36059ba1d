/* maskkit report: the header, and the Markdown template filled in and
 * rendered to HTML with libcmark-gfm (tables extension), with a table of
 * contents made from the headings.
 *
 * The contents link to GitHub's anchors (its slugs of the heading text),
 * so that they work in README.md on GitHub; libcmark-gfm gives headings no
 * id, so the HTML's headings get the same slugs here.  Headings are ATX
 * ('#' lines) outside fenced code, the only ones the report writes, so the
 * k-th heading of the Markdown is the k-th <hN> of the HTML. */
#include "config.h"
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
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
	const char *toc; /* the contents, "" until the headings are known */
};

static const char *rp_slot_value(const char *name, size_t len, void *arg)
{
	const struct rp_slots *slots = arg;

	if (len == 3 && !strncmp(name, "toc", 3))
		return slots->toc;
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
	/* unsafe: raw HTML (<details> around long tables) is the report's own;
	 * text from outside is escaped by rp_md_text, and code by cmark */
	p = cmark_parser_new(CMARK_OPT_UNSAFE);
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
		html = cmark_render_html(doc, CMARK_OPT_UNSAFE, cmark_parser_get_syntax_extensions(p));
	if (doc)
		cmark_node_free(doc);
	cmark_parser_free(p);
	return html;
}

/* ---- the contents ------------------------------------------------------------- */

#define RP_MAX_HEADINGS 256

typedef struct rp_heading {
	int level;
	const char *text; /* into the Markdown */
	size_t len;
	char base[120], slug[136]; /* the text's slug, and made unique */
} rp_heading;

/* GitHub's slug of a heading: lower case, spaces as '-', letters, digits,
 * '-' and '_' kept, other ASCII dropped; of UTF-8, the general punctuation
 * block (dashes, quotes: E2 80 xx, E2 81 xx) dropped, the rest kept
 * (ρ, ², ᵀ). */
static void rp_slug(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t k = 0; k < len && o + 4 < size; k++) {
		unsigned char c = (unsigned char)s[k];
		if (c == 0xe2 && k + 2 < len && ((unsigned char)s[k + 1] & 0xfe) == 0x80)
			k += 2;
		else if (c >= 0x80 || isalnum(c) || c == '-' || c == '_')
			out[o++] = (char)tolower(c);
		else if (c == ' ')
			out[o++] = '-';
	}
	out[o] = '\0';
}

/* The ATX headings of md outside fenced code, each with its slug made
 * unique as GitHub does (a second "x" is "x-1"). */
static int rp_headings(const char *md, rp_heading *h, int max)
{
	bool fenced = false;
	int n = 0;

	for (const char *line = md; *line && n < max;) {
		size_t len = strcspn(line, "\n"), hashes = strspn(line, "#");
		if (!strncmp(line, "```", 3))
			fenced = !fenced;
		else if (!fenced && hashes >= 1 && hashes <= 6 && line[hashes] == ' ') {
			h[n].level = (int)hashes;
			h[n].text = line + hashes + 1;
			h[n].len = len - hashes - 1;
			int same = 0;
			rp_slug(h[n].text, h[n].len, h[n].base, sizeof h[n].base);
			for (int k = 0; k < n; k++)
				same += !strcmp(h[k].base, h[n].base);
			if (same)
				snprintf(h[n].slug, sizeof h[n].slug, "%s-%d", h[n].base, same);
			else
				snprintf(h[n].slug, sizeof h[n].slug, "%s", h[n].base);
			n++;
		}
		line += len + (line[len] == '\n');
	}
	return n;
}

/* The contents: the sections (##) and their parts (####), as a list of
 * links; malloc'd. */
static char *rp_toc(const rp_heading *h, int n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs("**Contents**\n\n", f);
	for (int k = 0; k < n; k++)
		if (h[k].level == 2 || h[k].level == 4)
			fprintf(f, "%s- [%.*s](#%s)\n", h[k].level == 4 ? "  " : "", (int)h[k].len,
				h[k].text, h[k].slug);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* html with id="slug" added to its k-th heading tag, for each heading;
 * malloc'd.  The HTML escapes '<' in text and code, so "<hN>" is a tag. */
static char *rp_html_ids(const char *html, const rp_heading *h, int n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	const char *p = html;
	int k = 0;

	if (!f)
		return NULL;
	for (const char *tag; k < n && (tag = strstr(p, "<h"));) {
		if (tag[2] == '0' + h[k].level && tag[3] == '>') {
			fwrite(p, 1, (size_t)(tag - p), f);
			fprintf(f, "<h%d id=\"%s\">", h[k].level, h[k].slug);
			p = tag + 4;
			k++;
		} else {
			fwrite(p, 1, (size_t)(tag - p) + 2, f);
			p = tag + 2;
		}
	}
	fputs(p, f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

int rp_render(report *r, rp_section *sections, int nsections)
{
	struct rp_slots slots = {sections, nsections, ""};
	char *md_t = NULL, *html_t = NULL, *md = NULL, *body = NULL, *ided = NULL, *html = NULL;
	char *toc = NULL;
	size_t md_len = 0, html_len = 0;
	rp_heading *h = calloc(RP_MAX_HEADINGS, sizeof *h);
	int nh = 0, ret = h ? mk_template_read("report.md", &md_t) : MK_ENOMEM;

	if (!ret)
		ret = mk_template_read("report.html", &html_t);
	/* twice: the contents are made from the headings of the first */
	if (!ret)
		ret = rp_fill("report.md", rp_skip_comment(md_t), rp_slot_value, &slots, &md, &md_len);
	if (!ret && !(toc = rp_toc(h, nh = rp_headings(md, h, RP_MAX_HEADINGS))))
		ret = MK_ENOMEM;
	if (!ret) {
		free(md);
		md = NULL;
		slots.toc = toc;
		ret = rp_fill("report.md", rp_skip_comment(md_t), rp_slot_value, &slots, &md, &md_len);
	}
	if (!ret)
		nh = rp_headings(md, h, RP_MAX_HEADINGS);
	if (!ret && (!(body = rp_markdown_html(md, md_len)) || !(ided = rp_html_ids(body, h, nh))))
		ret = mk_error_set(MK_ENOMEM, "cmark-gfm could not render the report");
	if (!ret)
		ret = rp_fill("report.html", html_t, rp_html_value, ided, &html, &html_len);
	if (ret == MK_ENOMEM)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (!ret)
		ret = rp_write_file(r, "README.md", md, md_len);
	if (!ret)
		ret = rp_write_file(r, "index.html", html, html_len);
	free(h);
	free(toc);
	free(md_t);
	free(html_t);
	free(md);
	free(body);
	free(ided);
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
