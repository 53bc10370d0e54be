/* SPDX-License-Identifier: Apache-2.0 */
/* zip_guard.h - one unambiguous central directory (core/io/zip_guard.c). */
#ifndef SAMC_CORE_ZIP_GUARD_H
#define SAMC_CORE_ZIP_GUARD_H

#include <stdint.h>
#include <zip.h>

#include "samc_status.h"

/* Refuse an archive that readers may see differently: more than one
 * self-consistent end-of-central-directory record in the tail that zip
 * readers search (PyTorch's reader, Python's zipfile and unzip take the
 * last, libzip may take another), or a central directory at the end of the
 * file whose entries (count and names, in order) differ from libzip's.
 * `m` is the whole file (size bytes). */
samc_status samc__zip_check_directory(const uint8_t *m, uint64_t size, zip_t *za, const char *path, samc_error *err);

#endif
