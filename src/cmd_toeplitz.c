/* stub */
#include "config.h"
#include "cli.h"
static int cmd_run(int argc, char **argv) { (void)argc; (void)argv; return 2; }
const struct mk_cmd mk_cmd_toeplitz = { .name = "toeplitz", .summary = "stub", .usage = "stub", .run = cmd_run };
