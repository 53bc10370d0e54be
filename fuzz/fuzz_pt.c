/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_pt.c - PyTorch zip checkpoints (core/io/weights_pt.c + core/io/pickle.c +
 * libzip) through samc_weights_open.
 *
 * Two modes, chosen by the first byte:
 *   even: the rest of the input is the file, as is (zip structure, CRCs);
 *   odd:  the rest describes a checkpoint that is packed into a valid zip
 *         here, so mutations reach the pickle, the storages and the view
 *         arithmetic instead of dying on a CRC:
 *           u8 flags   bit0 deflate entries, bit1 add 'byteorder',
 *                      bit2 byteorder 'big', bit3 garbage byteorder,
 *                      bit4 no 'version' entry, bit5 archive dir 'a/b'
 *           u32 LE n, n bytes of data.pkl
 *           then entries: u8 k, k bytes storage key, u32 LE m, m bytes
 *           (archive/data/<key>)
 * fuzz/make_seeds.py writes seeds of both kinds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "core/io/weights.h"
#include "fuzz_common.h"

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Pack the structured description into zip bytes (malloc'd). */
static uint8_t *pack(const uint8_t *d, size_t n, size_t *out_n)
{
    if (n < 5)
        return NULL;
    const uint8_t flags = d[0];
    size_t pos = 1;
    size_t pkl_n = rd32(d + pos);
    pos += 4;
    if (pkl_n > n - pos)
        pkl_n = n - pos;
    const uint8_t *pkl = d + pos;
    pos += pkl_n;

    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    if (!src)
        abort();
    zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    if (!za)
        abort();
    zip_source_keep(src);
    const char *arch = (flags & 32) ? "a/b/" : "archive/";
    const zip_int32_t cm = (flags & 1) ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
    char name[512];
#define ADD(nm, ptr, len)                                                                    \
    do {                                                                                     \
        zip_source_t *s_ = zip_source_buffer(za, (ptr), (len), 0);                           \
        zip_int64_t i_ = s_ ? zip_file_add(za, (nm), s_, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1; \
        if (i_ < 0) {                                                                        \
            zip_source_free(s_);                                                             \
        } else {                                                                             \
            zip_set_file_compression(za, (zip_uint64_t)i_, cm, 1);                           \
        }                                                                                    \
    } while (0)
    snprintf(name, sizeof name, "%sdata.pkl", arch);
    ADD(name, pkl, pkl_n);
    if (!(flags & 16)) {
        snprintf(name, sizeof name, "%sversion", arch);
        ADD(name, "3\n", 2);
    }
    if (flags & 2) {
        snprintf(name, sizeof name, "%sbyteorder", arch);
        if (flags & 8)
            ADD(name, "middle-endian", 13);
        else if (flags & 4)
            ADD(name, "big", 3);
        else
            ADD(name, "little", 6);
    }
    int entries = 0;
    while (pos < n && entries < 256) {
        size_t k = d[pos++];
        if (k > n - pos)
            break;
        char key[256];
        memcpy(key, d + pos, k);
        key[k] = '\0';
        pos += k;
        if (n - pos < 4)
            break;
        size_t m = rd32(d + pos);
        pos += 4;
        if (m > n - pos)
            m = n - pos;
        snprintf(name, sizeof name, "%sdata/%s", arch, key);
        ADD(name, d + pos, m);
        pos += m;
        entries++;
    }
#undef ADD
    if (zip_close(za) != 0) {
        zip_discard(za);
        zip_source_free(src);
        return NULL;
    }
    zip_stat_t zs;
    zip_stat_init(&zs);
    uint8_t *buf = NULL;
    if (zip_source_stat(src, &zs) == 0 && zip_source_open(src) == 0) {
        buf = malloc(zs.size ? zs.size : 1);
        zip_int64_t r = buf ? zip_source_read(src, buf, zs.size) : -1;
        zip_source_close(src);
        if (r != (zip_int64_t)zs.size) {
            free(buf);
            buf = NULL;
        }
        *out_n = zs.size;
    }
    zip_source_free(src);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t *packed = NULL;
    const uint8_t *file = data + 1;
    size_t file_n = size - 1;
    if (data[0] & 1) {
        packed = pack(data + 1, size - 1, &file_n);
        if (!packed)
            return 0;
        file = packed;
    }
    const char *path = fuzz_temp_file(file, file_n, ".pt");
    free(packed);
    samc_error err = {0};
    samc_weights *w = NULL;
    samc_status st = samc_weights_open_pt(path, &w, &err);
    fuzz_check_error(st, &err, path, "samc_weights_open(.pt)");
    if (!st) {
        for (size_t i = 0; i < samc_weights_count(w); i++) {
            const samc_tensor *t = samc_weights_at(w, i);
            if (!t || !samc_weights_key(w, i) || samc_weights_find(w, samc_weights_key(w, i)) != t)
                abort();
            fuzz_touch(t->data, (size_t)samc_numel(t));
        }
        samc_error e2 = {0};
        fuzz_check_error(samc_weights_check_finite(w, &e2), &e2, path, "samc_weights_check_finite");
    }
    samc_weights_free(w);
    return 0;
}
