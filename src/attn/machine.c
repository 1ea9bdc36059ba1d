/*
 * The machine a sweep ran on, for its records: the CPU model, threads, the
 * build, and what a GPU backend reports about its device.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "core.h"
#include "attn.h"
#include "attn_backend.h"
#include "result.h"

static void sweep_cpu_model(char *buf, size_t cap)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	buf[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':'), *v;
		size_t len;
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		len = strcspn(v, "\r\n");
		snprintf(buf, cap, "%.*s", (int)len, v);
		break;
	}
	if (f)
		fclose(f);
}

void mk_machine_describe(mk_machine *out)
{
	memset(out, 0, sizeof *out);
	sweep_cpu_model(out->cpu, sizeof out->cpu);
#ifdef _OPENMP
	out->threads = omp_get_max_threads();
#else
	out->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
	snprintf(out->version, sizeof out->version, "%s", mk_version());
	snprintf(out->commit, sizeof out->commit, "%s", MK_COMMIT);
}

void mk_machine_describe_backend(const mk_attn_backend *b, mk_machine *out)
{
	mk_machine_describe(out);
	if (b && b->describe)
		b->describe(b, out);
}

/* ---- the machine, described once ------------------------------------------ */

static const mk_field machine_fields[] = {
	{MK_FIELD(mk_machine, cpu, "cpu", MK_FT_CHARS), .help = "the CPU's model name"},
	{MK_FIELD(mk_machine, version, "maskkit", MK_FT_CHARS), .help = "maskkit's version"},
	{MK_FIELD(mk_machine, commit, "commit", MK_FT_CHARS), .help = "the build's commit"},
	{MK_FIELD(mk_machine, gpu, "gpu", MK_FT_CHARS), .help = "the GPU a GPU backend ran on"},
	{MK_FIELD(mk_machine, gpu_driver, "gpu_driver", MK_FT_CHARS)},
	{MK_FIELD(mk_machine, threads, "threads", MK_FT_INT), .help = "OpenMP threads"},
	{MK_FIELD(mk_machine, gpu_sms, "gpu_sms", MK_FT_INT),
	 .help = "the GPU's streaming multiprocessors"},
	{MK_FIELD(mk_machine, gpu_clock_mhz, "gpu_clock_mhz", MK_FT_INT), .unit = "MHz"},
	{MK_FIELD(mk_machine, gpu_mem_clock_mhz, "gpu_mem_clock_mhz", MK_FT_INT), .unit = "MHz"},
};

const mk_record mk_machine_record = MK_RECORD("machine", mk_machine, machine_fields);
