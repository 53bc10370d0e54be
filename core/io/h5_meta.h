/* SPDX-License-Identifier: Apache-2.0 */
/* h5_meta.h - what a parity dump says about itself, for the loaders that take
 * a dump as a checkpoint (core/models/): its task (/inputs attribute
 * `task`), its config (/model attribute `config_json`) and, for SAM 3, the
 * tokenizer's vocabulary (/model/bpe_vocab_gz). docs/parity.md.
 *
 * libsamc has no HDF5: the parity harness reads dumps (parity/dump_meta.c,
 * dump_weights.c) and installs its reader here when a program links it (the
 * samc command, the tests, the fuzzers). Without it a dump is refused with
 * SAMC_ERR_UNSUPPORTED and a message that says so. */
#ifndef SAMC_CORE_IO_H5_META_H
#define SAMC_CORE_IO_H5_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/io/weights.h"
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

/* The reader of dumps (parity/dump_reader.h); NULL uninstalls it. */
typedef struct samc_dump_reader {
    samc_status (*open_weights)(const char *path, samc_weights **out, samc_error *err);
    samc_status (*read_meta)(const char *path, bool with_vocab, samc_h5_meta *out, samc_error *err);
} samc_dump_reader;
void samc_dump_reader_install(const samc_dump_reader *r);

#endif
