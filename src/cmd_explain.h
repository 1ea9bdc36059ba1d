/* `maskkit explain`: the toy models' half (cmd_explain_toy.c), entered from
 * cmd_explain.c when --toy is among the arguments. */
#ifndef MK_CMD_EXPLAIN_H
#define MK_CMD_EXPLAIN_H

/* Parses its own options (argv as given to `maskkit explain`) and runs the
 * toy; returns the exit code. */
int explain_toy_main(int argc, char **argv);

/* The toy options' part of `maskkit explain --help`. */
#define EXPLAIN_TOY_USAGE \
"Toy models (placeholder)\n"

#endif
