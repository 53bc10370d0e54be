/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_io.h - what the isolated runners of the SAM 3 parts share: one
 * run's recorded inputs read by name (released together at the end) and
 * its output slots. Every call is a no-op once the run has failed, so a
 * runner reads all it needs and checks the status once. Internal to
 * core/models/sam3/. */
#ifndef SAMC_CORE_MODELS_SAM3_IO_H
#define SAMC_CORE_MODELS_SAM3_IO_H

#include "core/base/error.h"
#include "core/runtime/layer_io.h"

#define SAMC_SAM3_IO_MAX 24

typedef struct samc_sam3_io {
    const samc_layer_io *io;
    samc_layer_out *out;
    samc_error *err;
    samc_status st;
    samc_tensor in[SAMC_SAM3_IO_MAX];
    int n_in;
} samc_sam3_io;

static inline samc_sam3_io samc__sam3_io(const samc_layer_io *io, samc_layer_out *out, samc_error *err)
{
    return (samc_sam3_io){.io = io, .out = out, .err = err};
}
/* A required tensor input: in/<name>, else in/<pos>. */
samc_tensor *samc__sam3_in(samc_sam3_io *r, const char *name, const char *pos);
/* An optional tensor input: NULL when absent or None. */
samc_tensor *samc__sam3_in_opt(samc_sam3_io *r, const char *name);
/* A required number (not None). */
double samc__sam3_in_num(samc_sam3_io *r, const char *name, const char *pos);
/* A new output slot `name` of the given shape. */
samc_tensor *samc__sam3_out(samc_sam3_io *r, const char *name, int ndim, const int64_t *shape);
#define samc__sam3_out_v(r, name, nd, ...) samc__sam3_out((r), (name), (nd), (const int64_t[]){__VA_ARGS__})
/* A shape problem of the recorded inputs (what they must be). */
void samc__sam3_io_shape(samc_sam3_io *r, const char *fmt, ...) SAMC_PRINTF(2, 3);
/* Releases the inputs; the run's status. */
samc_status samc__sam3_io_end(samc_sam3_io *r);

/* The outputs an isolated run copies out of its forward: each (name,
 * tensor) pair into a new slot. */
samc_status samc__sam3_io_put(samc_sam3_io *r, const char *name, const samc_tensor *t);

/* Op-test inputs several parts share: a prompt of 32 text tokens (24 of
 * them padding) and 4 geometry tokens, `name` (36, 1, D) seq-first or
 * (1, 36, D) batch-first, and its padding mask `mask` (1, 36). */
samc_status samc__sam3_example_prompt(samc_layer_inputs *in, const char *name, const char *mask, int64_t D,
                                      bool batch_first, uint64_t *seed, samc_error *err);

#endif
