/* SPDX-License-Identifier: Apache-2.0 */
/* zip_guard.c - see zip_guard.h. A torch.save archive has one EOCD record
 * with an empty comment; a second record (say, hidden in the comment of the
 * first, with its own central directory) makes libzip and PyTorch read
 * different entries under the same names: model A for PyTorch, model B for
 * samc, silently. */
#include "core/io/zip_guard.h"

#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"

#define EOCD_SIG 0x06054b50u
#define CDIR_SIG 0x02014b50u

/* An EOCD record at `e` whose directory (offset + size) ends where the
 * record (or its zip64 records) begins, and whose comment stays in the file. */
static int consistent_eocd(const uint8_t *m, uint64_t size, uint64_t e)
{
    if (e + 22 > size || samc_load_u32le(m + e) != EOCD_SIG)
        return 0;
    const uint64_t cd_size = samc_load_u32le(m + e + 12), cd_off = samc_load_u32le(m + e + 16);
    const uint16_t clen = samc_load_u16le(m + e + 20);
    if (e + 22 + clen > size)
        return 0;
    if (cd_off == 0xFFFFFFFFu || cd_size == 0xFFFFFFFFu) /* zip64: the locator sits right before */
        return e >= 20 && samc_load_u32le(m + e - 20) == 0x07064b50u;
    return cd_off + cd_size <= e && (cd_size == 0 || (cd_off + 4 <= size && samc_load_u32le(m + cd_off) == CDIR_SIG));
}

/* The last consistent EOCD in the searched tail (what PyTorch takes), and
 * how many there are. */
static int find_eocds(const uint8_t *m, uint64_t size, uint64_t *last)
{
    if (size < 22)
        return 0;
    const uint64_t stop = size > 22 + 65535 ? size - 22 - 65535 : 0;
    int n = 0;
    for (uint64_t e = size - 22 + 1; e-- > stop;)
        if (samc_load_u32le(m + e) == EOCD_SIG && consistent_eocd(m, size, e) && n++ == 0)
            *last = e;
    return n;
}

samc_status samc__zip_check_directory(const uint8_t *m, uint64_t size, zip_t *za, const char *path, samc_error *err)
{
    uint64_t e = 0;
    const int n = find_eocds(m, size, &e);
    if (n > 1)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: the zip archive has %d end-of-central-directory records: zip readers would not agree on"
                         " its entries (refused)", path, n);
    if (n == 0)
        return SAMC_OK; /* libzip opened it some other way (zip64): its own consistency checks apply */
    const zip_int64_t nz = zip_get_num_entries(za, 0);
    uint64_t count = samc_load_u16le(m + e + 10), pos = samc_load_u32le(m + e + 16);
    if (count == 0xFFFFu || pos == 0xFFFFFFFFu)
        return SAMC_OK; /* zip64 directory: compared by libzip's ZIP_CHECKCONS */
    if (nz < 0 || (uint64_t)nz != count)
        return samc_fail(err, SAMC_ERR_FORMAT,
                         "%s: libzip sees %lld entries, the central directory at the end of the file %llu (refused:"
                         " two readings of one archive)", path, (long long)nz, (unsigned long long)count);
    for (uint64_t i = 0; i < count; i++) {
        if (pos + 46 > size || samc_load_u32le(m + pos) != CDIR_SIG)
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: central directory entry %llu is corrupt", path,
                             (unsigned long long)i);
        const uint16_t nlen = samc_load_u16le(m + pos + 28);
        const uint64_t next = pos + 46 + nlen + samc_load_u16le(m + pos + 30) + samc_load_u16le(m + pos + 32);
        const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
        if (next > size || !name || strlen(name) != nlen || memcmp(name, m + pos + 46, nlen))
            return samc_fail(err, SAMC_ERR_FORMAT,
                             "%s: entry %llu of libzip's directory differs from the central directory at the end of "
                             "the file (refused: two readings of one archive)", path, (unsigned long long)i);
        pos = next;
    }
    return SAMC_OK;
}
