/*
 * maskkit: design and measure Transformer attention masks.
 *
 * The umbrella header: it includes every module of the public API, and each
 * module's header also compiles on its own.
 *   core.h      status codes and errors, sizes and limits, data types,
 *               freeing rules, the version
 *   mask.h      packed bit rows, masks and their tile layouts
 *   patterns.h  the registered pattern families and their parameters
 *   expr.h      the mask language: expressions, binding, cursors
 *   measure.h   measuring a mask: sparsity, structure, tiles
 *   io.h        mask files: formats, reading, atomic writing, stacks
 *   tensor.h    dense float tensors in .npy and HDF5 files
 *   data.h      data sets of masks and attention maps: Eq. 9 sparsity,
 *               pruning, adaptive axis masks
 *   attn_maps.h attention statistics per layer and head, mean maps and
 *               axis indicators derived from attention
 *   weights.h   trained weights: matrices, Toeplitz and TISA fits, the
 *               positional term
 *   attn.h      the attention engine: kernels, normalisations, layouts,
 *               backends, the machine
 *   explain.h   explaining away: column sums, queries and keys, toy models
 *   sweep.h     sweeps: what a mask costs, measured and checked
 *   par.h       maskkit across MPI ranks
 *   model.h     HuggingFace models: config.json, WordPiece tokens, a BERT encoder
 *   plot.h      pictures: heatmap PNGs and gnuplot figures from templates
 *   result.h    results as data: fields described once, one emitter (text,
 *               tables, CSV, JSON)
 *   heads.h     what each attention head does: masses, entropy, roles
 */
#ifndef MK_MASKKIT_H
#define MK_MASKKIT_H

#include "core.h"
#include "mask.h"
#include "patterns.h"
#include "expr.h"
#include "measure.h"
#include "io.h"
#include "tensor.h"
#include "data.h"
#include "attn_maps.h"
#include "weights.h"
#include "attn.h"
#include "explain.h"
#include "sweep.h"
#include "par.h"
#include "model.h"
#include "plot.h"
#include "result.h"
#include "heads.h"

#endif /* MK_MASKKIT_H */
