/* `maskkit explain`: the toy models' half (cmd_explain_toy.c), entered from
 * cmd_explain.c when --toy is among the arguments. */
#ifndef MK_CMD_EXPLAIN_H
#define MK_CMD_EXPLAIN_H

/* Parses its own options (argv as given to `maskkit explain`) and runs the
 * toy; returns the exit code. */
int explain_toy_main(int argc, char **argv);

#define EXPLAIN_TOY_STR_(x) #x
#define EXPLAIN_TOY_STR(x) EXPLAIN_TOY_STR_(x)

/* The toy options' part of `maskkit explain --help` (needs maskkit.h). */
#define EXPLAIN_TOY_USAGE \
"usage: maskkit explain --toy collapse [--steps N] [--seed S] [--score dot|dist]\n" \
"                       [--sd S] [--json] [--csv FILE] [--png FILE.png] [-o PREFIX]\n" \
"       maskkit explain --toy distance [--a LIST] [--r MIN..MAX[:POINTS]]\n" \
"                       [--sizes LIST] [--score dot|dist] [--json] [--csv FILE]\n" \
"                       [--png FILE.png] [-o PREFIX]\n" \
"\n" \
"The toy models of Ding et al., \"Attention that does not Explain Away\": points\n" \
"x_i attend to each other with Q = K = I, x_i <- sum_j pi_ij x_j, all at once.\n" \
"UNAS: pi_ij = softmax over j of s_ij.  DNAS: xi_ij = exp(s_ij) / sum_i exp(s_ij),\n" \
"then pi_ij = xi_ij / sum_j xi_ij (computed in logs: no 0/0).\n" \
"  collapse  500 points around (1.8, 0.7) and 50 around (-1, -1); prints the\n" \
"            clusters left after each step (points within 1e-3 linked, single\n" \
"            linkage).  With the defaults UNAS is 1 cluster after 4 steps and\n" \
"            DNAS 2, as in the paper's Fig. 6.\n" \
"  distance  N0 points at +a and N1 at -a: the paper's closed forms for the\n" \
"            centre distance c0 - c1 after one step against r = N0 / N1 (its\n" \
"            Fig. 7), checked against simulated steps on every (N0, N1) pair\n" \
"            of --sizes; prints the largest |closed - simulated|.\n" \
"\n" \
"toy options:\n" \
"      --toy NAME         collapse or distance\n" \
"      --score dot|dist   s_ij = x_i . x_j (dot, default: a Transformer's scores,\n" \
"                         unscaled) or -|x_i - x_j|^2 / 2 (dist: a Gaussian\n" \
"                         kernel; UNAS then takes 5 to 7 steps to collapse).\n" \
"                         Both give the same distance toy (|x_i| = a for all i)\n" \
"      --steps N          collapse: attention steps, 0 to 1000 (default 4)\n" \
"      --seed S           collapse: the points' seed (default " \
	EXPLAIN_TOY_STR(MK_TOY_COLLAPSE_SEED) ")\n" \
"      --sd S             collapse: each coordinate's standard deviation, 0 to\n" \
"                         100 (default 0.1; covariance 0.1 I is --sd 0.316)\n" \
"      --a LIST           distance: half distances, e.g. 0.25,0.5,0.75,1 (the\n" \
"                         default; at most 32)\n" \
"      --r MIN..MAX[:POINTS]  distance: the curves' ratios, spaced evenly in\n" \
"                         log r (default 0.01..100:201)\n" \
"      --sizes LIST       distance: the check's cluster sizes, 1 to 1000 each\n" \
"                         (default 1,2,5,10,20,50,100: r from 0.01 to 100)\n" \
"      --json             JSON on stdout instead of the table\n" \
"      --csv FILE         collapse: scheme,step,clusters,point,mode,x,y for every\n" \
"                         point after every step; distance: the curves (kind\n" \
"                         'curve': a,r,unas,dnas), the check's steps ('check')\n" \
"                         and the largest errors ('max')\n" \
"      --png FILE.png     the figure (gnuplot): collapse, a row of panels per\n" \
"                         scheme, one per step (--steps 10 at most); distance,\n" \
"                         c0 - c1 against r (log scale), a line per a\n" \
"  -o, --output PREFIX    PREFIX.csv, PREFIX.json and PREFIX.png together\n" \
"\n" \
"Files are written to a temporary name and renamed, so a failure leaves an\n" \
"existing file intact.  exit status: 0 success, 2 bad input, 1 internal or\n" \
"system error.\n"

#endif
