/* h5_meta.h - what a parity dump says about itself, for the loaders that take
 * a dump as a checkpoint (core/models/): its task (/inputs attribute
 * `task`), its config (/model attribute `config_json`) and, for SAM 3, the
 * tokenizer's vocabulary (/model/bpe_vocab_gz). PARITY_DUMP_FORMAT.md. */
#ifndef SAMC_CORE_IO_H5_META_H
#define SAMC_CORE_IO_H5_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

typedef struct samc_h5_meta {
    char *task;          /* "image", "video", "amg", "sam3_image", "sam3_video", "sam3_inst"; NULL when absent */
    char *config_json;   /* NULL when absent */
    char *variant;       /* /model attribute `variant` (free text); NULL when absent */
    char *code_constants_json; /* SAM 3 video: the official code's inline constants; NULL when absent */
    uint8_t *vocab_gz;   /* NULL when absent (read only when asked for) */
    size_t vocab_n;
} samc_h5_meta;

/* Read the dump's meta; with_vocab: also /model/bpe_vocab_gz when present.
 * A file HDF5 cannot open, or a vocabulary that is not 1-D bytes, is an error
 * naming `path`; absent attributes are not. */
samc_status samc_h5_meta_read(const char *path, bool with_vocab, samc_h5_meta *out, samc_error *err);
void samc_h5_meta_free(samc_h5_meta *m);

#endif
