/* Placeholder: the toy models' command half (being written). */
#include "config.h"
#include "cli.h"
#include "cmd_explain.h"

int explain_toy_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(mk_error_set(MK_EINVAL, "--toy is not written yet"));
}
