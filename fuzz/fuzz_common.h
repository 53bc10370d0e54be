/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_common.h - helpers shared by the libFuzzer harnesses (fuzz_*.c).
 *
 * Each harness defines LLVMFuzzerTestOneInput. Built with -DSAMC_FUZZ=ON the
 * harnesses link libFuzzer; in every build they are also linked with
 * replay_main.c into replay_* programs that run saved inputs (the crash
 * reproducers in tests/fuzz_regress/) through the normal library.
 *
 * Invariants checked on every input (a violation aborts, so the fuzzer
 * reports it like a crash):
 *   - a failing call leaves a non-empty message, and for file loaders the
 *     message names the file;
 *   - a succeeding loader returns consistent data (shapes, counts), every
 *     float of which is read once (so ASan sees any short buffer).
 */
#ifndef SAMC_FUZZ_COMMON_H
#define SAMC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write data to this process's temporary file (created once, on tmpfs when
 * /dev/shm exists, removed at exit) and return its path. `suffix` is
 * appended to the name (".pt", ".h5", ...). */
const char *fuzz_temp_file(const uint8_t *data, size_t size, const char *suffix);

/* Abort unless a failure left a message (naming `must_name` when not NULL). */
void fuzz_check_error(samc_status st, const samc_error *err, const char *must_name, const char *what);

struct samc_key_list;
/* Abort unless every key an accepted config implies is a real tensor (rank
 * 0-4, every dimension >= 0, a terminated name); `family` names the config
 * in the report. */
void fuzz_check_keys(const struct samc_key_list *keys, const char *family);

/* Read every float (a sum the compiler cannot drop). */
double fuzz_touch(const float *p, size_t n);
/* Read every byte. */
unsigned fuzz_touch_bytes(const void *p, size_t n);

#endif
