/* SPDX-License-Identifier: Apache-2.0 */
/* impl.h - the implementation registry.
 *
 * An implementation is one row: a name, the parity tolerance it is held to,
 * one ops table per layer family part (the bodies), and optionally a
 * `prepare` that packs weights once per model (at load, never per call). A
 * new implementation is one new row in core/runtime/impl_table.c (tests may
 * register their own rows, e.g. fault injection); nothing outside that file
 * names an implementation.
 *
 * An implementation may lack bodies: those come from its `fallback` (a bf16
 * implementation can fall back to fast for layers it has no kernel for).
 */
#ifndef SAMC_CORE_RUNTIME_IMPL_H
#define SAMC_CORE_RUNTIME_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/nn/records.h"

/* The ops tables: the shared primitives, the tracker both families mount,
 * and each family's own kinds. */
enum samc_ops_table {
    SAMC_OPS_NN,          /* samc_nn_ops (core/nn/nn_ops.h) */
    SAMC_OPS_TRACKER,     /* samc_tracker_ops (core/models/tracker/tracker_layers.h) */
    SAMC_OPS_SAM2,        /* samc_sam2_ops (core/models/sam2/sam2_layers.h) */
    SAMC_OPS_SAM3,        /* samc_sam3_ops (core/models/sam3/sam3_layers.h) */
    SAMC_OPS_TABLES
};

/* The records of a model that an implementation may prepare (pack). */
typedef struct samc_param_list {
    samc_linear **linears;
    int n_linears, cap_linears;
    samc_conv2d **convs;
    int n_convs, cap_convs;
} samc_param_list;

typedef struct samc_impl {
    const char *name;
    const char *about;             /* one line for --help and `samc info` */
    double tol;                    /* parity tolerance: max rel per point vs. the official fp32 code */
    const char *fallback;          /* bodies it lacks come from this implementation, or NULL */
    bool single_threaded;          /* its bodies run on one thread whatever the exec's count (ref) */
    const void *ops[SAMC_OPS_TABLES];
    /* Whether this CPU can run it (NULL: always); `why` names what is missing. */
    bool (*available)(const char **why);
    /* Pack the weights of `params` once into slot `slot` of each record's
     * `prep`; *arena owns what was allocated (freed by release). NULL: no
     * preparation. Called once per model and implementation, under the
     * model's lock. */
    samc_status (*prepare)(const samc_param_list *params, int slot, void **arena, samc_error *err);
    void (*release)(void *arena);
} samc_impl;

/* By name; NULL when unknown. */
const samc_impl *samc_impl_find(const char *name);
/* By name, loading the plugin that provides it when it is one of the
 * plugins' (core/runtime/plugin.c: "cuda" is in libsamc_cuda.so). NULL with
 * *st and err set when unknown ("<what>: unknown implementation ...") or
 * when its plugin cannot be loaded (why, and how to build or find it). */
const samc_impl *samc_impl_lookup(const char *name, const char *what, samc_status *st, samc_error *err);
int samc_impl_count(void);
const samc_impl *samc_impl_get(int i);
/* The implementation used when none is chosen. */
const samc_impl *samc_impl_default(void);
/* "ref, fast, ..." for messages. */
const char *samc_impl_names(char *buf, size_t n);
/* The prep slot of an implementation that prepares (0..SAMC_PREP_SLOTS-1),
 * -1 for one that does not. */
int samc_impl_prep_slot(const samc_impl *impl);

/* Add a row at run time (tests: fault injection). Not thread-safe against
 * concurrent model use; the row must outlive its use. */
samc_status samc_impl_register(const samc_impl *impl, samc_error *err);
void samc_impl_unregister(const samc_impl *impl);

/* Whether `impl` itself has the body at byte `offset` of table `table`. */
bool samc_impl_has_body(const samc_impl *impl, int table, size_t offset);
/* `impl`, or the first of its fallback chain, that has that body; NULL when none. */
const samc_impl *samc_impl_provider(const samc_impl *impl, int table, size_t offset);

/* What the built-in implementations run on this machine (impl_table.c): the
 * kernels' instruction-set level and why, the bf16 kernel, OpenMP and its
 * threads, the build's target (samc_system_info). */
void samc__impl_system_info(char *buf, size_t n);

/* The kind name of body `body` (a row's SAMC_BODY value) of table
 * `table` ("hiera_block"), or NULL when the kind lists have no such body. */
const char *samc_kind_name(int table, size_t body);

/* Grow a param list (SAMC_ERR_NOMEM on failure). */
samc_status samc_param_list_add_linear(samc_param_list *p, samc_linear *l);
samc_status samc_param_list_add_conv(samc_param_list *p, samc_conv2d *c);
void samc_param_list_free(samc_param_list *p);

#endif
