/* SPDX-License-Identifier: Apache-2.0 */
/* layer_io.h - what an isolated layer runner reads and writes.
 *
 * An isolated runner runs one layer call alone on recorded inputs (a parity
 * dump's /trace/NNNNNN/in, or inputs a test made up) and returns its output
 * slots by name (PARITY_DUMP_FORMAT.md slot names: "0", "1.2", ...). The
 * source of the inputs is abstract so the same runner serves the parity
 * harness and the tests.
 */
#ifndef SAMC_CORE_RUNTIME_LAYER_IO_H
#define SAMC_CORE_RUNTIME_LAYER_IO_H

#include <stdbool.h>

#include "core/base/tensor.h"

typedef struct samc_layer_io {
    void *user;
    /* in/<name> when the call recorded it by keyword, else in/<pos>
     * (positional; pos may be NULL). Any numeric dtype, as float32. */
    samc_status (*tensor)(void *user, const char *name, const char *pos, samc_tensor *out, samc_error *err);
    /* Whether the tensor in/<name> exists. */
    bool (*has)(void *user, const char *name);
    /* A scalar input (int, float, bool); *is_none set for None. */
    samc_status (*scalar)(void *user, const char *name, const char *pos, double *v, bool *is_none, samc_error *err);
    /* A string input (malloc'd into *out). */
    samc_status (*string)(void *user, const char *name, const char *pos, char **out, samc_error *err);
    /* The names of all tensor inputs (in/<name>); *names and each name are
     * malloc'd (free with samc_layer_io_free_names). */
    samc_status (*names)(void *user, char ***names, int *n, samc_error *err);
    /* The task the call belongs to: the video predictor's @preprocess and
     * @postprocess differ from the image predictor's. */
    bool video;
    int video_h, video_w;   /* the video resolution (video task) */
    double max_hole_area, max_sprinkle_area; /* the image predictor's options (image task) */
} samc_layer_io;

static inline samc_status samc_io_tensor(const samc_layer_io *io, const char *name, const char *pos, samc_tensor *t,
                                         samc_error *err)
{
    return io->tensor(io->user, name, pos, t, err);
}
/* Whether the tensor in/<name> (or, when pos is given, in/<pos>) exists. */
static inline bool samc_io_has(const samc_layer_io *io, const char *name, const char *pos)
{
    return io->has(io->user, name) || (pos && io->has(io->user, pos));
}
/* A scalar input, or `dflt` when it is absent or None. */
static inline double samc_io_scalar_or(const samc_layer_io *io, const char *name, const char *pos, double dflt)
{
    double v = dflt;
    bool none = false;
    if (io->scalar(io->user, name, pos, &v, &none, NULL) || none)
        return dflt;
    return v;
}

#define SAMC_LAYER_OUT_MAX 24

typedef struct samc_layer_out { /* output slots, in the order produced */
    int n;
    char names[SAMC_LAYER_OUT_MAX][64];
    samc_tensor t[SAMC_LAYER_OUT_MAX];
} samc_layer_out;

void samc_layer_io_free_names(char **names, int n);

/* A new named (empty) output slot, or NULL when all are used. */
samc_tensor *samc_layer_out_slot(samc_layer_out *o, const char *name);
void samc_layer_out_free(samc_layer_out *o);

/* Named inputs held in memory, readable through a samc_layer_io (tests and
 * the op tests make inputs this way). */
typedef struct samc_layer_input {
    char name[64];
    bool is_scalar;
    double v;
    samc_tensor t;
} samc_layer_input;

typedef struct samc_layer_inputs {
    int n;
    samc_layer_input items[SAMC_LAYER_OUT_MAX];
    bool video;                 /* copied into the io view (see samc_layer_io) */
    int video_h, video_w;
} samc_layer_inputs;

/* A new tensor input named `name`, allocated with the given shape (zeroed). */
samc_tensor *samc_inputs_tensor(samc_layer_inputs *in, const char *name, int ndim, const int64_t *shape,
                                samc_error *err);
samc_status samc_inputs_scalar(samc_layer_inputs *in, const char *name, double v, samc_error *err);
/* A tensor input of `ndim` dims (the variadic sizes, int64_t) filled with
 * seeded values uniform in [lo, hi). */
samc_tensor *samc_inputs_random(samc_layer_inputs *in, const char *name, uint64_t seed, float lo, float hi,
                                samc_error *err, int ndim, ...);
/* In an op-test input generator (core/runtime/exec.h, samc_example_fn,
 * whose `in`, `seed` and `err` it uses): a seeded random input, each with
 * the next seed; out of memory returns from the generator. */
#define SAMC_INPUT_RANDOM(name, lo, hi, ...)                                                              \
    do {                                                                                                  \
        if (!samc_inputs_random(in, name, seed++, lo, hi, err, __VA_ARGS__))                               \
            return SAMC_ERR_NOMEM;                                                                        \
    } while (0)

/* The io view: in/<name> lookups by name (positions are not used). */
samc_layer_io samc_inputs_io(samc_layer_inputs *in);
void samc_inputs_free(samc_layer_inputs *in);

#endif
