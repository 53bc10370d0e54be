/* SPDX-License-Identifier: Apache-2.0 */
/* weights.h - the weight store: official state_dict key -> float32 tensor.
 *
 * One front end, samc_weights_open(), opens any supported file by its
 * content (magic bytes), never by its extension:
 *   - PyTorch zip checkpoints (torch.save, as the official sam2*.pt files):
 *     "PK\x03\x04" ...; the state_dict is the dict under key "model" (or the
 *     top-level dict itself when it holds tensors directly).
 *   - safetensors: 8-byte little-endian header length, then '{'.
 *   - parity dumps (HDF5, "\x89HDF\r\n\x1a\n"): the datasets under /weights.
 * F16 and BF16 are converted to float32 at load; F32 data of a mapped
 * safetensors file is used in place (no copy); complex64 (C64,
 * ComplexFloatStorage: RoPE tables) becomes float32 (re, im) pairs with a
 * trailing dimension of 2.
 * Keys keep their insertion order (the order in the file).
 */
#ifndef SAMC_CORE_WEIGHTS_H
#define SAMC_CORE_WEIGHTS_H

#include <stddef.h>

#include "core/base/fileio.h"
#include "core/base/tensor.h"

/* Most tensors one weight file may hold: each costs a key, an entry and an
 * allocation, so a file of 300k empty tensors cost 1.16 GB. */
#define SAMC_WEIGHTS_MAX_TENSORS (1 << 16)

typedef struct samc_weights samc_weights;

typedef enum samc_weights_format {
    SAMC_WEIGHTS_UNKNOWN = 0,
    SAMC_WEIGHTS_PT,
    SAMC_WEIGHTS_SAFETENSORS,
    SAMC_WEIGHTS_H5
} samc_weights_format;

/* Sniff the format from the first bytes of the file. */
samc_status samc_weights_detect(const char *path, samc_weights_format *fmt, samc_error *err);
/* Open by content. On failure *out is NULL and err names the file and problem. */
samc_status samc_weights_open(const char *path, samc_weights **out, samc_error *err);
/* Format-specific front ends (used by samc_weights_open). */
samc_status samc_weights_open_pt(const char *path, samc_weights **out, samc_error *err);
samc_status samc_weights_open_safetensors(const char *path, samc_weights **out, samc_error *err);
samc_status samc_weights_open_h5(const char *path, samc_weights **out, samc_error *err);

/* An empty store (for builders and tests). `source` is copied (may be NULL). */
samc_weights *samc_weights_new(const char *source);
void samc_weights_free(samc_weights *w);

/* Add a tensor. The store takes ownership of `data` (malloc'd, numel floats)
 * even on failure. A duplicate key is an error (SAMC_ERR_FORMAT). */
samc_status samc_weights_add(samc_weights *w, const char *key, int ndim, const int64_t *shape,
                             float *data, samc_error *err);

/* Add a view of float32 data the store does not own: it lies in the
 * mapping given to samc_weights_adopt_map (unmapped when the store is
 * freed), so a mapped checkpoint is not copied. */
samc_status samc_weights_add_view(samc_weights *w, const char *key, int ndim, const int64_t *shape,
                                  const float *data, samc_error *err);
void samc_weights_adopt_map(samc_weights *w, samc_mapped_file *mf);

/* Remove the entry a file names `key` (its data released with it). */
samc_status samc_weights_remove(samc_weights *w, const char *key, samc_error *err);

/* A file whose tensors carry another naming than the official state_dict
 * (the transformers converters'): `fn` writes the name `official` has in the
 * file. Once set, samc_weights_find and samc_weights_expect take official
 * names, and samc_weights_file_key renders a key as the file names it (for
 * messages); samc_weights_key and _find_file keep the file's own names.
 * `name` ("transformers") says which naming (samc_weights_naming). */
typedef void (*samc_key_naming_fn)(const char *official, char *out, size_t n);
void samc_weights_set_naming(samc_weights *w, samc_key_naming_fn fn, const char *name);
const char *samc_weights_naming(const samc_weights *w); /* NULL: the official names */
const char *samc_weights_file_key(const samc_weights *w, const char *official, char *buf, size_t n);
const samc_tensor *samc_weights_find_file(const samc_weights *w, const char *file_key);

size_t samc_weights_count(const samc_weights *w);
const char *samc_weights_key(const samc_weights *w, size_t i);        /* insertion order */
const samc_tensor *samc_weights_at(const samc_weights *w, size_t i);
const samc_tensor *samc_weights_find(const samc_weights *w, const char *key); /* NULL if absent; official name */
const char *samc_weights_source(const samc_weights *w);               /* file path or "" */
samc_weights_format samc_weights_get_format(const samc_weights *w);
void samc_weights_set_format(samc_weights *w, samc_weights_format f);

/* Look up `key` and check its shape. Errors name the source, key, expected
 * and actual shape. */
samc_status samc_weights_expect(const samc_weights *w, const char *key, int ndim,
                                 const int64_t *shape, const samc_tensor **out, samc_error *err);

/* Report NaN/Inf in any tensor (first offending key named). */
samc_status samc_weights_check_finite(const samc_weights *w, samc_error *err);

#endif
