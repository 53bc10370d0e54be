/* SPDX-License-Identifier: Apache-2.0 */
/* exec.h - the layer registry and how the wiring calls layers.
 *
 * A model family names every layer once, in a table of samc_layer_def rows
 * (core/models/<family>/, one array per model part): the official module
 * name (pattern), the body it calls, whether it is a parity point, and its
 * isolated runner. A samc_exec is one use of a loaded model: it expands the
 * rows into layer instances ("image_encoder.trunk.blocks.3"), resolves each
 * instance's implementation once (when the implementation or an override
 * is set, never per call), holds the trace callback, the thread count and
 * the implementations' workspace. Any number of execs may share one model.
 *
 * A layer call in the wiring:
 *
 *   const samc_layer *L = samc_layer_get(x, &defs[ENC_BLOCK], i);
 *   st = SAM2_IMAGE(L)->hiera_block(samc_layer_ctx(x, L), blk, &in, &out);
 *   st = samc_layer_done(x, L, sc, st, err, 1, slot0, outs);
 *
 * samc_layer_done prefixes a failure with the layer's name and the body's
 * own message, or reports the outputs to the trace under the layer's name,
 * with the frame/object scope the caller passes explicitly.
 */
#ifndef SAMC_CORE_RUNTIME_EXEC_H
#define SAMC_CORE_RUNTIME_EXEC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/io/weights.h"
#include "core/runtime/impl.h"
#include "core/runtime/layer_io.h"

#define SAMC_LAYER_NAME_MAX 96
#define SAMC_MAX_OVERRIDES 64
#define SAMC_EXEC_WIRE_SLOTS 4
/* A wire slot larger than this (a batch of B maps) is given back at the
 * next request that fits in it. */
#define SAMC_EXEC_WIRE_KEEP_BYTES ((size_t)32 << 20)

/* Which frame and object a call works on (video); -1: none. */
typedef struct samc_scope {
    int frame_idx, obj_id;
} samc_scope;
extern const samc_scope samc_no_scope;

/* Called once per completed parity point with its output slots, in
 * completion order (children before parents), like the dump's /trace. */
typedef void (*samc_trace_fn)(void *user, const char *module, const samc_scope *scope, int nslots,
                              const char *const *slots, const samc_tensor *const *tensors);

typedef struct samc_exec samc_exec;
typedef struct samc_sd samc_sd; /* core/runtime/statedict.h */
typedef struct samc_layer samc_layer;

/* Asked at every layer boundary (samc_layer_done) and at the video loop's
 * frame boundaries: true stops the call with SAMC_ERR_ABORTED. The API's
 * abort callback (samc.h, samc_abort_fn). */
typedef bool (*samc_exec_abort_fn)(void *user);

/* Decisions a model takes by a threshold on values it computed. A chained
 * parity run may re-synchronise them with the recorded run
 * (PARITY_DUMP_FORMAT.md, "Comparison"): where the C value and the recorded
 * one fall on two sides of the threshold and the C value is within the
 * tolerance of it, the hook makes the C side take the recorded decision
 * (by changing `values` within that tolerance). Without a hook nothing
 * changes. */
typedef enum samc_decision_kind {
    SAMC_DECISION_BF16,         /* values: stored memory before its bfloat16 rounding */
    SAMC_DECISION_OBJECT_SCORE, /* values[0]: the object-score logit, decided by > 0 */
    SAMC_DECISION_BEST_MASK,    /* values: the multimask IoU predictions, decided by argmax */
    SAMC_DECISION_STABILITY,    /* values[0]: token 0's stability score, decided by >= threshold;
                                   masks: the n_masks candidate masks (hw each), choices: token 0
                                   or choices[1] (the best multimask token) */
    SAMC_DECISION_BINARIZE,     /* values: mask logits binarised for the memory, decided by > 0 */
    SAMC_DECISION_NON_OVERLAP,  /* values: n_masks objects' logits (hw each), each pixel kept for the argmax */
    SAMC_DECISION_THRESHOLD,    /* values: each compared with threshold by cmp (SAM 3 video's loop); the
                                   recorded values are slot `slot` of the next record of `module` */
} samc_decision_kind;

typedef enum samc_cmp { SAMC_CMP_GT, SAMC_CMP_GE, SAMC_CMP_LT } samc_cmp;

typedef struct samc_decision {
    samc_decision_kind kind;
    const char *module;         /* the parity point whose record holds the recorded side */
    float *values;
    int64_t n;
    float threshold;
    const float *masks;         /* STABILITY only */
    int n_masks;
    int64_t hw;
    int choices[2];
    const char *slot;           /* THRESHOLD only */
    samc_cmp cmp;
} samc_decision;

typedef void (*samc_decision_fn)(void *user, const samc_scope *sc, samc_decision *d);

/* Runs call L->index of layer L alone on recorded inputs (parity isolated
 * mode, the op tests). L->self is the part instance the layer belongs to. */
typedef samc_status samc_isolated_body(samc_exec *x, const samc_layer *L, const samc_layer_io *in,
                                      samc_layer_out *out, samc_error *err);
typedef samc_isolated_body *samc_isolated_fn;
/* Makes seeded inputs for call `index` of a row at its part's shapes (the
 * op tests): channel, head and window sizes as the part instance `self`
 * has them; the token grids as its config gives them when `full`, else a
 * reduced grid that still has several windows (and padding where the real
 * one has it). NULL: the layer is covered through a composite. */
typedef samc_status (*samc_example_fn)(const void *self, int index, uint64_t seed, bool full,
                                       samc_layer_inputs *in, samc_error *err);

/* A row's body: its byte offset in its ops table, plus one (0: none).
 * SAMC_BODY(samc_tracker_ops, cxblock) names the body `cxblock` of the
 * tracker's table; every implementation's body of that kind is
 * samc_<impl>_cxblock (ref/ops_tables.c, fast/ops_tables.c). */
#define SAMC_BODY(ops_type, kind) (offsetof(ops_type, kind) + 1)

/* One row of a part: a layer (or a composite of layers) named relative to
 * the part's root. */
typedef struct samc_layer_def {
    /* official module name below the part's root ("layers.#", "norm"; ""
     * is the root itself; '#' stands for the instance index; "@name" a
     * function point) */
    const char *pattern;
    int table;                     /* SAMC_OPS_* of its bodies */
    size_t body;                   /* SAMC_BODY(...) in that table; 0: a composite (calls other layers) */
    size_t body2;                  /* a second body of the same table the row also calls (0: none) */
    /* Only on a part's own row (""): a body of the same table that runs the
     * whole part in one call, for an implementation that keeps the part's
     * activations to itself (a GPU). The wiring calls it when the
     * implementation serving this row has it and serves every row of the
     * part too; the body reports the part's inner parity points through
     * ctx->emit. 0: none (the wiring runs the part row by row). */
    size_t whole;
    bool parity;                   /* a parity point of the dump format (traced) */
    /* A parity point only where this says so (NULL: `parity` decides):
     * the families' dump formats differ (SAM 3's traces obj_ptr_tpos_proj,
     * conv_s0 and mask_downsample, SAM 2's does not). */
    int (*parity_if)(const void *self);
    /* A composite whose record the isolated mode cannot rebuild (its inputs
     * are the state of a whole call tree, not a record's in/ group, e.g.
     * SAM 3's @track_step): compared in chained runs only; its children
     * run alone. Such a row has no isolated runner. */
    bool chained_only;
    /* instances of a '#' pattern; on any other row, 0 when this config does
     * not build the module (NULL: 1) */
    int (*count)(const void *self);
    samc_isolated_fn isolated;     /* NULL: not runnable alone */
    samc_example_fn example;
    /* Instances of one class run the same code paths with the same shapes:
     * the op tests run the first of each (NULL: all instances alike). */
    int (*op_class)(const void *self, int index);
} samc_layer_def;

/* A part: the unit a family mounts. Its rows are named relative to its
 * root, its weights described with keys relative to it, its forwards take
 * the part instance (a struct inside the family's model). */
typedef struct samc_part_def {
    const char *name;              /* the official class it mirrors ("MemoryAttention") */
    const samc_layer_def *rows;
    int n_rows;
    /* Its weights, keys relative to the root (the walk is mounted there),
     * binding the part instance `self` from its config section `cfg`
     * (NULL: a part without weights). */
    samc_status (*describe)(samc_sd *sd, void *self, const void *cfg, samc_error *err);
} samc_part_def;

/* A part mounted in a family: its instance lives at `offset` in the
 * family's model struct, its rows and keys are named under `root`
 * ("memory_attention", "tracker.transformer.encoder"; "" at the top). */
typedef struct samc_mount {
    const samc_part_def *part;
    const char *root;
    size_t offset;                 /* of the part instance in the family's model */
    size_t cfg_offset;             /* of its config section in the family's model */
    /* Where its keys are when not under `root` (NULL: at root): SAM 3's
     * video model mounts the detector's parts at their image-model roots
     * (the parity names) with their keys under "detector.<root>", next to
     * the tracker's parts at "tracker.*" (keys and names alike). */
    const char *keys;
} samc_mount;

typedef struct samc_layer_family {
    const char *name;              /* "sam2" */
    const samc_mount *mounts;
    int n_mounts;
} samc_layer_family;

/* What every family's loaded model holds for the runtime: its weights, the
 * records implementations may prepare, and their prepared copies. */
typedef struct samc_model_base {
    samc_weights *weights;
    samc_param_list params;
    void *prep_arena[SAMC_PREP_SLOTS];
    bool prepared[SAMC_PREP_SLOTS];
    pthread_mutex_t lock;
} samc_model_base;

void samc_model_base_init(samc_model_base *b);
void samc_model_base_free(samc_model_base *b); /* releases prepared data and the weights */
/* Prepare `impl` for this model once (thread-safe). */
samc_status samc_model_prepare(samc_model_base *b, const samc_impl *impl, samc_error *err);

struct samc_layer {        /* one instance: "image_encoder.trunk.blocks.3" */
    const samc_layer_def *def;
    int index;
    int mount;                     /* index into the family's mounts */
    const void *self;              /* the part instance (in the model) */
    char name[SAMC_LAYER_NAME_MAX];
    const samc_impl *impl;         /* the implementation serving it (after fallback) */
    const samc_impl *asked;        /* the implementation asked for it (default or override) */
    const void *ops;               /* impl->ops[def->table] */
    /* def->whole's table of impl when that body serves the whole part
     * (see samc_layer_def.whole), else NULL */
    const void *whole_ops;
    int prep_slot;                 /* impl's prep slot, -1 */
};

struct samc_exec {
    const void *model;
    samc_model_base *base;
    const samc_layer_family *fam;
    samc_layer *layers;
    int n_layers;
    int *row_first;                /* per mount and row (mount_row0[m] + r): its first instance */
    int *mount_row0;
    const samc_impl *impl;         /* the default for every layer */
    struct {
        char layer[SAMC_LAYER_NAME_MAX];
        const samc_impl *impl;
    } overrides[SAMC_MAX_OVERRIDES];
    int n_overrides;
    samc_trace_fn trace;
    void *trace_user;
    /* The scope of points reported without one (sc NULL), or NULL: a
     * caller's current frame around parts that do not take a scope (SAM 3's
     * detector runs once per video frame). */
    const samc_scope *scope;
    samc_exec_abort_fn abort;      /* NULL: never stops early */
    void *abort_user;
    samc_decision_fn decide;       /* NULL: decisions stand as computed */
    void *decide_user;
    samc_ctx ctx;                  /* threads, workspace, the body's error record */
    const samc_layer *emit_part;   /* the part whose whole-part body runs (samc_part_ctx) */
    const samc_scope *emit_scope;  /* and the scope its inner points are reported under */
    samc_error body_err;
    /* The wiring's own reusable buffers (samc_exec_wire): large activations
     * that every call writes in full (the decoder's token maps), kept so
     * that a call neither zero-fills nor page-faults them afresh. */
    float *wire[SAMC_EXEC_WIRE_SLOTS];
    size_t wire_cap[SAMC_EXEC_WIRE_SLOTS];
};

samc_status samc_exec_init(samc_exec *x, const samc_layer_family *fam, const void *model, samc_model_base *base,
                           samc_error *err);
/* The same with the default implementation `impl` (NULL: the registry's
 * default): a family that some implementation lacks bodies for starts on
 * one that has them. */
samc_status samc_exec_init_impl(samc_exec *x, const samc_layer_family *fam, const void *model,
                                samc_model_base *base, const char *impl, samc_error *err);
void samc_exec_free(samc_exec *x);
/* A non-owning, uninitialised (ndim, shape) tensor over wire slot `slot`,
 * grown as needed and kept until samc_exec_free (see
 * SAMC_EXEC_WIRE_KEEP_BYTES), so that repeated calls reuse touched memory.
 * The caller writes every element before reading it; a slot serves one
 * live tensor at a time, and the wiring that uses it must not be re-entered
 * while it is live. */
samc_status samc_exec_wire(samc_exec *x, int slot, int ndim, const int64_t *shape, samc_tensor *t, samc_error *err);
/* The default implementation, by name (overrides stay). */
samc_status samc_exec_set_impl(samc_exec *x, const char *name, samc_error *err);
/* "LAYER=IMPL": LAYER an instance name or a prefix of some at a '.'
 * boundary; the longest match wins. An unknown layer or implementation, or
 * one that has no body for a layer it would serve, is an error. */
samc_status samc_exec_add_override(samc_exec *x, const char *spec, samc_error *err);
void samc_exec_set_threads(samc_exec *x, int n);
/* Threads for the wiring's own element-wise passes over n floats: the
 * exec's count, but no more than one per 64K floats (as fast/'s
 * element-wise kernels: waking a thread costs more than less work). */
int samc_exec_wire_threads(const samc_exec *x, int64_t n);
void samc_exec_set_trace(samc_exec *x, samc_trace_fn fn, void *user);
void samc_exec_set_abort(samc_exec *x, samc_exec_abort_fn fn, void *user);
/* SAMC_ERR_ABORTED, with a message naming `where` (the boundary just
 * passed), when the abort hook asks to stop; else SAMC_OK. */
samc_status samc_exec_check_abort(samc_exec *x, const char *where, samc_error *err);
/* Whether any instance is named `name` or has it as a '.'-prefix. */
bool samc_exec_is_layer_name(const samc_exec *x, const char *name);
/* The instance named exactly `name`, or NULL. */
const samc_layer *samc_exec_find(const samc_exec *x, const char *name);
/* Instance `index` of row `def` of the part instance `self`. A row or an
 * index the part does not have is an internal error (abort): the wiring
 * iterates the part's own counts. */
const samc_layer *samc_part_layer(const samc_exec *x, const void *self, const samc_layer_def *def, int index);
/* The part instance mounted at `root`, or NULL. */
const void *samc_exec_part(const samc_exec *x, const char *root);

/* The context to pass to L's body (its error record cleared). */
samc_ctx *samc_layer_ctx(samc_exec *x, const samc_layer *L);
/* The same for the whole-part body of L (L->whole_ops set): ctx->emit
 * reports the part's rows by (row, index) to the trace, ctx->tracing says
 * whether anyone listens. */
samc_ctx *samc_part_ctx(samc_exec *x, const samc_layer *L, const samc_scope *sc);
/* After L's body returned `st`: on failure the error names the layer and
 * the body's reason; on success the outputs go to the trace (parity points),
 * then the abort hook is asked (SAMC_ERR_ABORTED: the caller unwinds as on
 * any failure, so nothing is left half-written). */
samc_status samc_layer_done(samc_exec *x, const samc_layer *L, const samc_scope *sc, samc_status st,
                            samc_error *err, int nslots, const char *const *slots, const samc_tensor *const *t);
/* Whether instance L is a parity point (its row's `parity`, `parity_if`). */
bool samc_layer_is_parity(const samc_layer *L);
/* A composite's outputs to the trace (when it is a parity point). */
void samc_layer_emit(samc_exec *x, const samc_layer *L, const samc_scope *sc, int nslots, const char *const *slots,
                     const samc_tensor *const *t);

/* A decision point: lets the hook, if any, re-synchronise `d` (see above). */
static inline void samc_exec_decide(samc_exec *x, const samc_scope *sc, samc_decision *d)
{
    if (x->decide)
        x->decide(x->decide_user, sc ? sc : x->scope ? x->scope : &samc_no_scope, d);
}

/* Isolated runners of composites: run the subtree while keeping only the
 * first emission of `module` (copied into `out`). */
typedef struct samc_capture {
    const char *module;
    samc_layer_out *out;
    samc_trace_fn saved;
    void *saved_user;
} samc_capture;
void samc_capture_begin(samc_exec *x, samc_capture *c, const char *module, samc_layer_out *out);
void samc_capture_end(samc_exec *x, samc_capture *c);

#endif
