/* SPDX-License-Identifier: Apache-2.0 */
/* dump_reader.h - the parity harness's reader of HDF5 dumps as checkpoints
 * (a dump's /weights, its task, config and vocabulary). libsamc itself has
 * no HDF5: core/io/h5_meta.h forwards to these once dump_install.c has
 * installed them, which linking the parity harness does (the samc command,
 * the tests, the fuzzers). */
#ifndef SAMC_PARITY_DUMP_READER_H
#define SAMC_PARITY_DUMP_READER_H

#include <stdbool.h>

#include "core/io/h5_meta.h"
#include "core/io/weights.h"

samc_status samc__dump_open_weights(const char *path, samc_weights **out, samc_error *err);
samc_status samc__dump_read_meta(const char *path, bool with_vocab, samc_h5_meta *out, samc_error *err);

#endif
