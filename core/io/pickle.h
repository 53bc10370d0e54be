/* SPDX-License-Identifier: Apache-2.0 */
/* pickle.h - a safe interpreter for the pickle subset torch.save emits for
 * state dicts.
 *
 * Nothing is ever imported or called. GLOBAL / STACK_GLOBAL resolve only
 * against a fixed allow-list of names (collections.OrderedDict,
 * torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and the
 * torch.<Type>Storage classes); anything else fails with SAMC_ERR_SECURITY.
 * REDUCE is only understood for those callables and produces plain data
 * (an empty dict, or a tensor descriptor that points at a storage record).
 * Persistent ids (BINPERSID) must be torch's
 *   ('storage', <torch.XStorage>, key, location, numel)
 * tuples; they become storage descriptors, never loaded here.
 *
 * The interpreter is iterative (no recursion on input structure) and every
 * resource is bounded: input size, MARK nesting, stack, memo and object
 * counts (see the SAMC_PKL_MAX_* limits), and the memory of everything it
 * builds by SAMC_PKL_BYTES_PER_BYTE per input byte. Dicts follow Python:
 * of a key set twice the last value wins (at the first one's position).
 */
#ifndef SAMC_CORE_PICKLE_H
#define SAMC_CORE_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"
#include "core/base/tensor.h"

#define SAMC_PKL_MAX_BYTES (256u * 1024u * 1024u) /* data.pkl size */
#define SAMC_PKL_MAX_DEPTH 1000                   /* open MARKs */
#define SAMC_PKL_MAX_STACK (1u << 22)             /* value stack entries */
#define SAMC_PKL_MAX_MEMO (1u << 22)              /* memo index */
#define SAMC_PKL_MAX_OBJECTS (1u << 23)           /* objects created */
/* Memory for objects, strings and containers: at most this many bytes per
 * pickle byte, plus the floor (torch.save state dicts of the fixtures take
 * 19-22 per byte; a pickle of empty objects ~130). */
#define SAMC_PKL_BYTES_PER_BYTE 48
#define SAMC_PKL_BUDGET_FLOOR_MIB 16

typedef enum samc_pkl_type {
    SAMC_PKL_NONE = 0,
    SAMC_PKL_BOOL,
    SAMC_PKL_INT,
    SAMC_PKL_FLOAT,
    SAMC_PKL_STR,
    SAMC_PKL_TUPLE,
    SAMC_PKL_LIST,
    SAMC_PKL_DICT,    /* dict and collections.OrderedDict (insertion order) */
    SAMC_PKL_GLOBAL,  /* an allow-listed name */
    SAMC_PKL_STORAGE, /* a persistent-id storage record */
    SAMC_PKL_TENSOR   /* _rebuild_tensor_v2(...) result: a view of a storage */
} samc_pkl_type;

typedef enum samc_pkl_global {
    SAMC_PKL_G_ORDERED_DICT = 0,
    SAMC_PKL_G_REBUILD_TENSOR_V2,
    SAMC_PKL_G_REBUILD_PARAMETER,
    SAMC_PKL_G_STORAGE /* torch.<X>Storage; the dtype is in `dtype` */
} samc_pkl_global;

/* torch storage element types (by their class name). */
typedef enum samc_pkl_dtype {
    SAMC_PKL_DT_FLOAT = 0,
    SAMC_PKL_DT_HALF,
    SAMC_PKL_DT_BFLOAT16,
    SAMC_PKL_DT_DOUBLE,
    SAMC_PKL_DT_LONG,
    SAMC_PKL_DT_INT,
    SAMC_PKL_DT_SHORT,
    SAMC_PKL_DT_CHAR,
    SAMC_PKL_DT_BYTE,
    SAMC_PKL_DT_BOOL,
    SAMC_PKL_DT_COMPLEX_FLOAT,
    SAMC_PKL_DT_COMPLEX_DOUBLE,
    SAMC_PKL_DT_QINT8,
    SAMC_PKL_DT_QUINT8,
    SAMC_PKL_DT_QINT32,
    SAMC_PKL_DT_QUINT4X2,
    SAMC_PKL_DT_QUINT2X4,
    SAMC_PKL_DT_COUNT
} samc_pkl_dtype;

typedef struct samc_pkl_obj samc_pkl_obj;
struct samc_pkl_obj {
    samc_pkl_type type;
    samc_pkl_obj *arena_next; /* internal: every object is owned by the samc_pickle */
    union {
        bool b;
        int64_t i;
        double f;
        struct {
            char *s; /* NUL-terminated copy; may contain NUL bytes within len */
            size_t len;
        } str;
        struct {
            samc_pkl_obj **items;
            size_t n, cap;
        } seq; /* TUPLE, LIST */
        struct {
            samc_pkl_obj **kv; /* key i = kv[2i], value i = kv[2i+1] */
            size_t n, cap;     /* n pairs */
        } dict;
        struct {
            samc_pkl_global id;
            samc_pkl_dtype dtype; /* for SAMC_PKL_G_STORAGE */
        } global;
        struct {
            samc_pkl_dtype dtype;
            const samc_pkl_obj *key; /* STR */
            const samc_pkl_obj *location; /* STR */
            int64_t numel; /* elements of dtype, >= 0 */
        } storage;
        struct {
            const samc_pkl_obj *storage; /* STORAGE */
            int64_t offset;
            int ndim;
            int64_t shape[SAMC_MAX_DIMS];
            int64_t stride[SAMC_MAX_DIMS];
        } tensor;
    } u;
};

typedef struct samc_pickle samc_pickle;

/* Run the pickle in data[0..n). `source` names it in messages (e.g.
 * "ckpt.pt: archive/data.pkl"). On success *out holds the result; free it
 * with samc_pickle_free. */
samc_status samc_pickle_load(const uint8_t *data, size_t n, const char *source, samc_pickle **out,
                             samc_error *err);
const samc_pkl_obj *samc_pickle_root(const samc_pickle *p);
void samc_pickle_free(samc_pickle *p);

const char *samc_pkl_type_name(samc_pkl_type t);
const char *samc_pkl_dtype_name(samc_pkl_dtype d); /* "FloatStorage", ... */
/* Dict lookup of a str key (first match), NULL if absent or not a dict. */
const samc_pkl_obj *samc_pkl_dict_get(const samc_pkl_obj *dict, const char *key);

#endif
