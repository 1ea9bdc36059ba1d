/* maskkit: the command table and dispatch. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static const struct mk_cmd *const mk_commands[] = {
	&mk_cmd_gen, &mk_cmd_compose, &mk_cmd_measure, &mk_cmd_patterns, &mk_cmd_toeplitz,
	&mk_cmd_positional, &mk_cmd_tokenize, &mk_cmd_encode, &mk_cmd_attn, &mk_cmd_sweep,
	&mk_cmd_attn_stats, &mk_cmd_heads, &mk_cmd_attn_derive, &mk_cmd_prune, &mk_cmd_axis, &mk_cmd_explain,
	&mk_cmd_report,
};
#define MK_NCOMMANDS (sizeof mk_commands / sizeof *mk_commands)

static void mk_main_usage(FILE *f)
{
	fprintf(f, "usage: maskkit <command> [options]\n\n"
		   "Design, compose and measure Transformer attention masks.\n\n"
		   "commands:\n");
	for (size_t k = 0; k < MK_NCOMMANDS; k++)
		fprintf(f, "  %-11s %s\n", mk_commands[k]->name, mk_commands[k]->summary);
	fprintf(f, "\n'maskkit <command> --help' describes a command; 'maskkit --version' "
		   "prints the version.\n");
}

/* Under MPI every rank must run the same command with the same arguments:
 * ranks in different collectives would wait for each other for ever, and
 * ranks with different options would mix their results. */
static bool mk_main_same_command(int argc, char **argv)
{
	uint64_t h = MK_PAR_HASH_INIT;

	if (mk_par_size() == 1)
		return false;
	for (int k = 1; k < argc; k++)
		h = mk_par_hash(h, argv[k], strlen(argv[k]) + 1);
	if (mk_par_same(&h, sizeof h, "its command line differs from the other ranks' (every "
			"rank must run the same maskkit command)")) {
		fprintf(stderr, "maskkit: %s\n", mk_error());
		return true;
	}
	mk_par_done();
	return false;
}

static void mk_main_free_lists(const struct mk_cmd *c, void *opts)
{
	for (int k = 0; c->opts && c->opts[k].name; k++)
		if (c->opts[k].type == CLI_LIST)
			free(((cli_list *)((char *)opts + c->opts[k].off))->v);
	free(opts);
}

/* Parses, agrees under MPI, runs: the one place a status becomes an exit
 * code and an error is printed. */
static int mk_main_exec(const struct mk_cmd *c, int argc, char **argv)
{
	void *opts = calloc(1, c->opts_size ? c->opts_size : 1);
	cli_args a;
	int ret, code;

	cli_set_command(c);
	if (!opts)
		return cli_fail(mk_error_set(MK_ENOMEM, "out of memory"));
	ret = cli_opt_parse(c, opts, argc, argv, &a);
	code = ret == 1 ? MK_EXIT_OK : ret ? cli_fail(ret) : -1;
	if (c->parallel)
		code = cli_par_parsed(code);
	if (code >= 0) {
		mk_main_free_lists(c, opts);
		return code;
	}
	ret = c->exec(opts, &a);
	mk_main_free_lists(c, opts);
	if (ret == CLI_DONE_USER || ret == CLI_DONE_SYS)
		return ret == CLI_DONE_USER ? MK_EXIT_USER : MK_EXIT_INTERNAL;
	return ret ? cli_fail(ret) : MK_EXIT_OK;
}

static const struct mk_cmd *mk_main_find(const char *name)
{
	const char *names[MK_NCOMMANDS + 1], *near;

	for (size_t k = 0; k < MK_NCOMMANDS; k++) {
		if (!strcmp(name, mk_commands[k]->name))
			return mk_commands[k];
		names[k] = mk_commands[k]->name;
	}
	names[MK_NCOMMANDS] = NULL;
	near = cli_closest(name, names);
	if (near)
		fprintf(stderr, "maskkit: unknown command '%s' (did you mean '%s'?)\n", name, near);
	else
		fprintf(stderr, "maskkit: unknown command '%s' (see 'maskkit --help')\n", name);
	return NULL;
}

static int mk_main_run(int argc, char **argv)
{
	const struct mk_cmd *c;

	if (argc < 2) {
		fprintf(stderr, "maskkit: missing command (see 'maskkit --help')\n");
		return MK_EXIT_USER;
	}
	if (!strcmp(argv[1], "help") && argc > 2) { /* "maskkit help CMD" is "maskkit CMD --help" */
		c = mk_main_find(argv[2]);
		if (!c)
			return MK_EXIT_USER;
		cli_opt_help(c, stdout);
		return cli_finish(MK_EXIT_OK);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		mk_main_usage(stdout);
		return cli_finish(MK_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("maskkit %s\n", mk_version());
		return cli_finish(MK_EXIT_OK);
	}
	if (mk_main_same_command(argc, argv))
		return MK_EXIT_USER;
	c = mk_main_find(argv[1]);
	if (!c)
		return MK_EXIT_USER;
	/* under mpirun, commands that do not share their work run once */
	if (!c->parallel && mk_par_rank() != 0)
		return MK_EXIT_OK;
	if (c->parallel)
		mk_par_share_cpus();
	return cli_finish(mk_main_exec(c, argc - 1, argv + 1));
}

/* Under MPI only rank 0 speaks: the others' standard output and error go to
 * /dev/null, and *err_fd keeps their stderr for a failure that must abort
 * the job (mk_par_end). */
static void mk_main_quiet_ranks(int *err_fd)
{
	int null;

	if (mk_par_rank() == 0)
		return;
	*err_fd = dup(STDERR_FILENO);
	null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
}

/* OpenBLAS starts its worker threads when it is loaded, each taking a work
 * buffer of about 128 MiB and retrying for ever when that fails, and exit()
 * then waits for them: under an address-space limit (ulimit -v) too low for
 * them the command would hang.  Such a limit makes maskkit run with as many
 * BLAS threads as fit (one: no workers); the library refuses BLAS work that
 * does not fit.  Its workers also sleep soon after a call (by default they
 * spin for about 0.1 s, through a whole short command, taking the CPU from
 * the threads with work on a busy machine), unless the user chose
 * otherwise.  OpenBLAS reads both when libmaskkit loads it, on first use
 * (src/core/blas_lazy.c), so they are set here in place.  The threads it
 * would start: as OpenBLAS counts them, or more (the check is then only
 * stricter). */
static void mk_main_blas_env(void)
{
#if MK_LAZY_BLAS
	static const char *const vars[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
					   "OMP_NUM_THREADS", NULL};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), want = 0;
	char num[16];
	int fit;

	for (int k = 0; vars[k] && want <= 0; k++)
		if (getenv(vars[k]))
			want = strtol(getenv(vars[k]), NULL, 10);
	if (want <= 0 || want > cpus)
		want = cpus < 1 ? 1 : cpus > 1024 ? 1024 : cpus;
	fit = mk_blas_threads_fit((int)want);
	if (fit < want) {
		snprintf(num, sizeof num, "%d", fit);
		setenv("OPENBLAS_NUM_THREADS", num, 1);
	}
	if (!getenv("OPENBLAS_THREAD_TIMEOUT")) /* 2^4 cycles: its smallest */
		setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
#endif
}

/* Threads that wait for work by spinning take the CPU from the threads that
 * have work when the machine is busy (a shared CI runner, a laptop): a
 * straggler's core is then shared three ways.  So OpenMP waits passively,
 * unless the user chose otherwise (OMP_WAIT_POLICY or GOMP_SPINCOUNT set).
 * libgomp reads its variables once, in a constructor, and glibc resets the
 * environment after the executable's own earliest code (.preinit_array)
 * has run.  Where the program links libgomp.a (configure), libgomp's
 * constructor is one of the program's and runs after this one (priority
 * 101 comes first), after libc's: the variable is set here, in place.  With
 * the shared libgomp, already initialised by then, it takes running again,
 * once (MASKKIT_THREADS_SET), at the cost of a process start (2 ms;
 * docs/performance.md), which the paths that start no thread skip
 * (mk_main_thread_free).  OpenBLAS's settings need neither (above). */
static bool mk_main_wait_policy_set(void)
{
	return getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT");
}

#if MK_STATIC_GOMP
__attribute__((constructor(101))) static void mk_main_omp_env(void)
{
	if (!mk_main_wait_policy_set())
		setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
}

static void mk_main_threads(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	mk_main_blas_env();
}
#else
/* Whether the command line only prints the version, a usage or an error
 * about the command's name: these paths start no thread and call no BLAS,
 * so the thread settings below change nothing for them and the restart
 * that applies them would only double their start-up (--version is what
 * scripts and shells' completion run most). */
static bool mk_main_thread_free(int argc, char **argv)
{
	static const char *const quick[] = {"--version", "-V", "--help", "-h", "help", NULL};

	if (argc < 2)
		return true;
	for (int k = 0; quick[k]; k++)
		if (!strcmp(argv[1], quick[k]))
			return true;
	for (size_t k = 0; k < MK_NCOMMANDS; k++)
		if (!strcmp(argv[1], mk_commands[k]->name))
			return argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
	return true; /* an unknown command: only its error is printed */
}

static void mk_main_threads(int argc, char **argv)
{
	mk_main_blas_env();
	if (getenv("MASKKIT_THREADS_SET") || mk_main_thread_free(argc, argv))
		return;
	if (mk_main_wait_policy_set() || setenv("OMP_WAIT_POLICY", "PASSIVE", 1) ||
	    setenv("MASKKIT_THREADS_SET", "1", 1))
		return;
	execv("/proc/self/exe", argv);
	/* no /proc: go on as we are; only the threads' waiting differs */
	fprintf(stderr, "maskkit: warning: cannot restart with the thread settings: %s\n",
		strerror(errno));
}
#endif

/* An interrupted command leaves no temporary file: the library removes
 * them (and stops gnuplot), then the signal does what it would have done. */
static void mk_main_on_signal(int sig)
{
	mk_cleanup_run(sig);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns: the signal is blocked in it */
}

/* `maskkit attn` maps its inputs (mk_tensor_read_mapped): a file another
 * program truncates while it is in use raises SIGBUS where a missing page
 * is touched.  That is a bad input, not a crash: one line naming the file,
 * the temporary files removed, exit 2.  Any other SIGBUS is a crash as
 * before. */
static void mk_main_on_sigbus(int sig, siginfo_t *info, void *ctx)
{
	static const char *const parts[] = {"maskkit: '", NULL,
		"' shrank while it was in use (another program truncated it); nothing "
		"was written\n"};
	static atomic_int taken;
	const char *file = info ? mk_tensor_mapped_file(info->si_addr) : NULL;

	(void)ctx;
	if (!file) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	/* every thread that touches the file faults: one cleans up and
	 * speaks, the others wait for its _exit */
	if (atomic_exchange(&taken, 1))
		for (;;)
			pause();
	mk_cleanup_run(SIGTERM);
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
		const char *p = parts[k] ? parts[k] : file;
		(void)!write(STDERR_FILENO, p, strlen(p));
	}
	_exit(MK_EXIT_USER);
}

static void mk_main_signals(void)
{
	struct sigaction bus = {.sa_sigaction = mk_main_on_sigbus, .sa_flags = SA_SIGINFO};
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	struct sigaction sa = {.sa_handler = mk_main_on_signal}, old;

	/* a second signal waits until the first one's cleanup is done */
	sigemptyset(&sa.sa_mask);
	for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++)
		sigaddset(&sa.sa_mask, sigs[k]);
	for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++)
		/* one ignored by whoever started us (nohup) stays ignored */
		if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[k], &sa, NULL);
	/* the other handlers' cleanup waits for this one's exit */
	bus.sa_mask = sa.sa_mask;
	sigaction(SIGBUS, &bus, NULL);
	/* past a file size limit (ulimit -f) a write then fails with EFBIG and
	 * is reported like a full disk, instead of killing the process */
	signal(SIGXFSZ, SIG_IGN);
}

int main(int argc, char **argv)
{
	int err_fd = STDERR_FILENO, code, ret;

	mk_main_threads(argc, argv);
	ret = mk_par_init(&argc, &argv);

	if (ret) {
		if (*mk_error())
			fprintf(stderr, "maskkit: %s\n", mk_error());
		return mk_status_is_user(ret) ? MK_EXIT_USER : MK_EXIT_INTERNAL;
	}
	mk_main_signals();
	mk_main_quiet_ranks(&err_fd);
	code = mk_main_run(argc, argv);
	return mk_par_end(code, mk_error(), err_fd < 0 ? STDERR_FILENO : err_fd);
}
