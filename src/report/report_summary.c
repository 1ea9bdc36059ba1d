/* What a report made, described once: the files it promised, made or not
 * and why (maskkit report --json). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "report.h"

int rp_result_make(const report *r, const char *out_arg, rp_result *s)
{
	*s = (rp_result){.out = out_arg, .directory = r->out, .page = !r->only,
			  .promised = r->nitems};
	if (!(s->files = calloc((size_t)r->nitems + 1, sizeof *s->files)))
		return mk_error_set(MK_ENOMEM, "out of memory for the JSON output");
	for (int k = 0; k < r->nitems; k++) {
		const rp_item *it = r->items[k];
		s->files[k] = (rp_file_view){.file = it->file, .section = it->section, .made = it->ok,
					     .reason = it->ok ? NULL : it->reason};
		s->made += it->ok;
	}
	s->nfiles = r->nitems;
	return MK_OK;
}

void rp_result_release(rp_result *s)
{
	free(s->files);
	memset(s, 0, sizeof *s);
}

static const mk_field rp_file_fields[] = {
	{MK_FIELD(rp_file_view, file, "file", MK_FT_STR), .help = "relative to the directory"},
	{MK_FIELD(rp_file_view, section, "section", MK_FT_STR)},
	{MK_FIELD(rp_file_view, made, "made", MK_FT_BOOL)},
	{MK_FIELD(rp_file_view, reason, "reason", MK_FT_STR), .help = "why not, or null"},
};
static const mk_record rp_file_record = MK_RECORD("report_file", rp_file_view, rp_file_fields);

static const mk_field rp_result_fields[] = {
	{MK_FIELD(rp_result, out, "out", MK_FT_STR), .help = "the directory as given"},
	{MK_FIELD(rp_result, directory, "directory", MK_FT_STR)},
	{MK_FIELD(rp_result, page, "page", MK_FT_BOOL), .help = "README.md and index.html too"},
	{MK_FIELD(rp_result, made, "made", MK_FT_I64)},
	{MK_FIELD(rp_result, promised, "promised", MK_FT_I64)},
	{MK_FIELD(rp_result, files, "files", MK_FT_LIST), .sub = &rp_file_record,
	 .count_offset = offsetof(rp_result, nfiles)},
};

const mk_record rp_result_record = MK_RECORD("report", rp_result, rp_result_fields);
