/* SPDX-License-Identifier: Apache-2.0 */
/* fileio.h - small helpers to read whole files or map them read-only.
 *
 * All functions fill `err` with a message that starts with the path.
 */
#ifndef SAMC_CORE_FILEIO_H
#define SAMC_CORE_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

/* A read-only view of a whole file. `data` is NULL for an empty file. */
typedef struct samc_mapped_file {
    const uint8_t *data;
    size_t size;
    int mapped; /* 1 when data comes from mmap, 0 when malloc'd or empty */
} samc_mapped_file;

/* Map `path` read-only (falls back to reading it into memory when mmap is
 * not possible). Missing/unreadable files give SAMC_ERR_IO. */
samc_status samc_file_map(const char *path, samc_mapped_file *mf, samc_error *err);
void samc_file_unmap(samc_mapped_file *mf);

/* SAMC_OK when `path` is a regular file that can be opened (a FIFO, device
 * or directory is refused without blocking); the message names the path. */
samc_status samc_check_regular(const char *path, samc_error *err);

/* Read up to `cap` bytes from the start of `path`; *got receives the count
 * and *file_size the total size of the file. */
samc_status samc_file_head(const char *path, void *buf, size_t cap, size_t *got, uint64_t *file_size,
                           samc_error *err);

/* Little-endian element decoding (exact conversions to float32).
 * `src` need not be aligned. */
float samc_f16_to_f32(uint16_t h);
float samc_bf16_to_f32(uint16_t b);
uint16_t samc_load_u16le(const uint8_t *p);
uint32_t samc_load_u32le(const uint8_t *p);
uint64_t samc_load_u64le(const uint8_t *p);
/* Convert n little-endian F32/F16/BF16 elements (4 or 2 bytes each) to float32. */
typedef enum samc_elem_kind { SAMC_ELEM_F32 = 0, SAMC_ELEM_F16, SAMC_ELEM_BF16 } samc_elem_kind;
size_t samc_elem_size(samc_elem_kind k);
void samc_decode_elems(samc_elem_kind k, const uint8_t *src, size_t n, float *dst);

#endif
