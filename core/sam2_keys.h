/* sam2_keys.h - the exact state_dict a config implies, and the check of a
 * loaded checkpoint against it (key by key, shape by shape) before compute. */
#ifndef SAMC_CORE_SAM2_KEYS_H
#define SAMC_CORE_SAM2_KEYS_H

#include "config.h"
#include "weights.h"

typedef struct samc_key_spec {
    char key[160];
    int ndim;
    int64_t shape[4];
} samc_key_spec;

typedef struct samc_key_list {
    samc_key_spec *items;
    int count, cap;
} samc_key_list;

/* Every key of SAM2Base.state_dict() for this config, in no particular order. */
samc_status samc_sam2_expected_keys(const samc_sam2_config *cfg, samc_key_list *out, samc_error *err);
void samc_key_list_free(samc_key_list *l);

/* Strict check like load_state_dict(strict=True): every expected key present
 * with its shape, no unexpected key. The error names the first missing or
 * mis-shaped key with expected and actual shape, and lists the unexpected
 * keys (up to a few, with a count). */
samc_status samc_sam2_check_weights(const samc_sam2_config *cfg, const samc_weights *w, samc_error *err);

/* Guess the preset from weight shapes (embed_dim, depth, 2.0 vs 2.1 keys).
 * Fails with a message when nothing matches (then --config is needed). */
samc_status samc_sam2_detect_config(const samc_weights *w, samc_sam2_config *cfg, samc_error *err);

#endif
