/* stub */
#include "config.h"
#include "cli.h"
static int cmd_run(int argc, char **argv) { (void)argc; (void)argv; return 2; }
const struct mk_cmd mk_cmd_positional = { .name = "positional", .summary = "stub", .usage = "stub", .run = cmd_run };
