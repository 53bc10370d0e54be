/* SPDX-License-Identifier: Apache-2.0 */
/* weights_pt.c - PyTorch zip checkpoints (torch.save, "new" zip format).
 *
 * Layout: <archive>/data.pkl (the pickled object), <archive>/data/<key>
 * (raw little-endian storage bytes), <archive>/version, maybe
 * <archive>/byteorder. The file is also mapped: float32 tensors of stored
 * (uncompressed) entries are used where they lie in the mapping, so a
 * checkpoint is not copied; anything else goes through libzip. The pickle is run by the safe interpreter in
 * pickle.c; tensors are views (offset, size, stride) of storages, gathered
 * here into contiguous float32 with every index checked against the storage.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>
#include <zlib.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/pickle.h"
#include "core/io/zip_guard.h"
#include "core/io/weights.h"

#define PT_MAX_NUMEL ((int64_t)1 << 31)          /* elements of one tensor */
#define PT_MAX_STORAGE_BYTES ((int64_t)1 << 34)  /* bytes of one storage */
#define PT_MAX_NAME 4096
#define PT_MAX_PKL_RATIO 64                      /* inflated / stored bytes of a deflated data.pkl */

typedef struct pt_ctx {
    const char *path;
    zip_t *za;
    char prefix[1024]; /* "<archive>/" */
    samc_error *err;
    /* one-entry storage cache: the bytes read (owned) or, for a stored entry
     * of the mapped file, where they lie in the mapping (cache_view) */
    char *cache_key;
    samc_pkl_dtype cache_dtype;
    uint8_t *cache;
    const uint8_t *cache_view;
    size_t cache_bytes;
    /* the file mapped read-only and the stored entries found in it */
    samc_mapped_file map;
    struct pt_local *locals;
    size_t n_locals;
    int views; /* tensors added as views into the mapping */
    uint64_t file_size;
    int64_t total_floats, max_total_floats; /* floats materialized so far, and the bound */
} pt_ctx;

/* One local file entry of the mapped archive: name and data offset. */
typedef struct pt_local {
    const char *name;
    size_t nlen;
    uint64_t data, csize, usize;
    uint16_t method;
} pt_local;

/* The zip64 extended fields of an extra block: each of usize, csize, off
 * that the fixed header marks 0xFFFFFFFF follows, in that order. */
static int zip64_fields(const uint8_t *x, size_t xlen, uint64_t *usize, uint64_t *csize, uint64_t *off)
{
    uint64_t *want[3] = {usize, csize, off};
    for (size_t p = 0; p + 4 <= xlen;) {
        const uint16_t id = samc_load_u16le(x + p), n = samc_load_u16le(x + p + 2);
        if (p + 4 + n > xlen)
            return 0;
        if (id == 1) {
            size_t q = p + 4;
            for (int k = 0; k < 3; k++)
                if (want[k] && *want[k] == 0xFFFFFFFFu) {
                    if (q + 8 > p + 4 + (size_t)n)
                        return 0;
                    *want[k] = samc_load_u64le(x + q), q += 8;
                }
            return 1;
        }
        p += 4 + (size_t)n;
    }
    for (int k = 0; k < 3; k++)
        if (want[k] && *want[k] == 0xFFFFFFFFu)
            return 0;
    return 1;
}

/* The central directory's offset and entry count (zip64 when present), or 0. */
static int find_central(const uint8_t *m, uint64_t size, uint64_t *cd, uint64_t *count)
{
    if (size < 22)
        return 0;
    uint64_t e = size - 22;
    const uint64_t stop = size > 22 + 65535 ? size - 22 - 65535 : 0;
    while (samc_load_u32le(m + e) != 0x06054b50u) { /* end of central directory record */
        if (e == stop)
            return 0;
        e--;
    }
    *cd = samc_load_u32le(m + e + 16), *count = samc_load_u16le(m + e + 10);
    if (e >= 20 && samc_load_u32le(m + e - 20) == 0x07064b50u) { /* zip64 locator */
        const uint64_t z = samc_load_u64le(m + e - 20 + 8);
        if (size < 56 || z > size - 56 || samc_load_u32le(m + z) != 0x06064b50u)
            return 0;
        *count = samc_load_u64le(m + z + 32), *cd = samc_load_u64le(m + z + 48);
    }
    return *cd < size;
}

/* Index the entries of the mapped archive from its central directory: name
 * and where its data starts (after the local header). Anything that does
 * not check out leaves the index short: those entries go through libzip. */
static void index_locals(pt_ctx *c)
{
    const uint8_t *m = c->map.data;
    const uint64_t size = c->map.size;
    uint64_t pos, count;
    if (!m || !find_central(m, size, &pos, &count) || count > size / 46)
        return;
    c->locals = calloc((size_t)(count ? count : 1), sizeof *c->locals);
    for (uint64_t i = 0; c->locals && i < count && pos + 46 <= size; i++) {
        if (samc_load_u32le(m + pos) != 0x02014b50u)
            break;
        const uint16_t method = samc_load_u16le(m + pos + 10);
        uint64_t csize = samc_load_u32le(m + pos + 20), usize = samc_load_u32le(m + pos + 24);
        const uint16_t nlen = samc_load_u16le(m + pos + 28), xlen = samc_load_u16le(m + pos + 30);
        const uint16_t clen = samc_load_u16le(m + pos + 32);
        uint64_t off = samc_load_u32le(m + pos + 42);
        if (pos + 46 + (uint64_t)nlen + xlen + clen > size ||
            !zip64_fields(m + pos + 46 + nlen, xlen, &usize, &csize, &off) || off > size - 30 ||
            samc_load_u32le(m + off) != 0x04034b50u)
            break;
        const uint64_t data = off + 30 + samc_load_u16le(m + off + 26) + samc_load_u16le(m + off + 28);
        if (data > size || csize > size - data)
            break;
        c->locals[c->n_locals++] = (pt_local){(const char *)m + pos + 46, nlen, data, csize, usize, method};
        pos += 46 + (uint64_t)nlen + xlen + clen;
    }
}

/* Where the `nbytes` of stored entry `name` lie in the mapping, or NULL
 * (not reached by the walk, compressed, or sizes that disagree with
 * libzip's central directory). */
static const uint8_t *mapped_entry(const pt_ctx *c, const char *name, uint64_t size, size_t nbytes)
{
    const size_t len = strlen(name);
    for (size_t i = 0; i < c->n_locals; i++) {
        const pt_local *l = &c->locals[i];
        if (l->nlen == len && !memcmp(l->name, name, len))
            return l->method == 0 && l->csize == size && l->usize == size && nbytes <= size
                       ? c->map.data + l->data
                       : NULL;
    }
    return NULL;
}

/* The CRC-32 of a mapped entry against the central directory's (libzip
 * checks it when it reads an entry; a mapped one is checked here). */
static samc_status check_crc(pt_ctx *c, zip_uint64_t idx, const char *name, const uint8_t *data, uint64_t size)
{
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(c->za, idx, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_CRC))
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: archive entry '%s' has no CRC to check", c->path, name);
    uLong crc = crc32(0L, Z_NULL, 0);
    for (uint64_t done = 0; done < size;) { /* zlib takes uInt lengths */
        const uInt n = size - done > (1u << 30) ? (1u << 30) : (uInt)(size - done);
        crc = crc32(crc, data + done, n);
        done += n;
    }
    if ((uint32_t)crc != zs.crc)
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: archive entry '%s' is corrupt: CRC error", c->path, name);
    return SAMC_OK;
}

/* Printable copy of a pickle string for messages. */
static const char *pstr(const samc_pkl_obj *s, char *buf, size_t cap)
{
    size_t j = 0;
    for (size_t i = 0; i < s->u.str.len && j + 4 < cap; i++) {
        unsigned char c = (unsigned char)s->u.str.s[i];
        buf[j++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (j + 4 >= cap && j < s->u.str.len) {
        memcpy(buf + j, "...", 3);
        j += 3;
    }
    buf[j] = '\0';
    return buf;
}

static samc_status zip_status(int code)
{
    switch (code) {
    case ZIP_ER_OPEN:
    case ZIP_ER_NOENT:
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
    case ZIP_ER_MEMORY: return code == ZIP_ER_MEMORY ? SAMC_ERR_NOMEM : SAMC_ERR_IO;
    default: return SAMC_ERR_FORMAT;
    }
}

/* Read the first `want` bytes of entry `idx` (whose name is `name`, size
 * `entry_size`); the rest of the entry is inflated through a small scratch
 * buffer (memory bounded by what the views need, not by what the entry
 * declares) so that its CRC is always verified. */
static samc_status read_entry(pt_ctx *c, zip_uint64_t idx, const char *name, uint8_t *buf,
                              size_t want, zip_uint64_t entry_size)
{
    zip_file_t *zf = zip_fopen_index(c->za, idx, 0);
    if (!zf) {
        zip_error_t *ze = zip_get_error(c->za);
        return samc_fail(c->err, zip_status(zip_error_code_zip(ze)),
                         "%s: cannot open archive entry '%s': %s", c->path, name,
                         zip_error_strerror(ze));
    }
    size_t done = 0;
    while (done < want) {
        size_t chunk = want - done;
        if (chunk > ((size_t)1 << 30))
            chunk = (size_t)1 << 30;
        zip_int64_t r = zip_fread(zf, buf + done, chunk);
        if (r < 0) {
            samc_status st = samc_fail(c->err, SAMC_ERR_FORMAT,
                                       "%s: error reading archive entry '%s': %s (file truncated or "
                                       "corrupt?)",
                                       c->path, name, zip_file_strerror(zf));
            zip_fclose(zf);
            return st;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    uint8_t scratch[16384];
    for (zip_uint64_t rest = done == want && entry_size > want ? entry_size - want : 0; rest;) {
        const zip_int64_t r = zip_fread(zf, scratch, rest < sizeof scratch ? rest : sizeof scratch);
        if (r <= 0) {
            samc_status st = samc_fail(c->err, SAMC_ERR_FORMAT, "%s: archive entry '%s' is corrupt or truncated: %s",
                                       c->path, name, r < 0 ? zip_file_strerror(zf) : "shorter than its recorded size");
            zip_fclose(zf);
            return st;
        }
        rest -= (zip_uint64_t)r;
    }
    if (done == want) {
        /* libzip checks the CRC when a read reaches the end of the entry */
        uint8_t extra;
        zip_int64_t r = zip_fread(zf, &extra, 1);
        if (r != 0) {
            samc_status st = samc_fail(c->err, SAMC_ERR_FORMAT,
                                       "%s: archive entry '%s' is corrupt: %s", c->path, name,
                                       r < 0 ? zip_file_strerror(zf) : "longer than its recorded size");
            zip_fclose(zf);
            return st;
        }
    }
    zip_fclose(zf);
    if (done != want)
        return samc_fail(c->err, SAMC_ERR_FORMAT,
                         "%s: archive entry '%s' ends after %zu of %zu bytes (truncated?)", c->path,
                         name, done, want);
    return SAMC_OK;
}

static samc_status stat_entry(pt_ctx *c, const char *name, zip_uint64_t *idx, zip_uint64_t *size,
                              int *found)
{
    *found = 0;
    zip_int64_t i = zip_name_locate(c->za, name, 0);
    if (i < 0)
        return SAMC_OK;
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(c->za, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_SIZE))
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: cannot stat archive entry '%s': %s", c->path,
                         name, zip_strerror(c->za));
    /* The declared size is what samc allocates: it must be possible for the
     * bytes the file holds (stored: equal; deflated: at most ~1032x, the
     * deflate limit), so a small file cannot declare gigabytes. */
    if ((zs.valid & ZIP_STAT_COMP_SIZE) && (zs.valid & ZIP_STAT_COMP_METHOD)) {
        const uint64_t limit = zs.comp_method == ZIP_CM_STORE ? zs.comp_size : zs.comp_size * 1100 + 4096;
        if (zs.size > limit)
            return samc_fail(c->err, SAMC_ERR_FORMAT,
                             "%s: archive entry '%s' declares %llu bytes from %llu stored bytes (corrupt, or a "
                             "zip bomb?)",
                             c->path, name, (unsigned long long)zs.size, (unsigned long long)zs.comp_size);
    }
    *idx = (zip_uint64_t)i;
    *size = zs.size;
    *found = 1;
    return SAMC_OK;
}

/* Find "<archive>/data.pkl" (exactly one directory level). */
static samc_status find_archive(pt_ctx *c, zip_uint64_t *pkl_idx, zip_uint64_t *pkl_size)
{
    zip_int64_t n = zip_get_num_entries(c->za, 0);
    int found = 0;
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(c->za, (zip_uint64_t)i, 0);
        if (!name)
            continue;
        size_t len = strlen(name);
        const char *slash = strchr(name, '/');
        if (len < 9 || strcmp(name + len - 9, "/data.pkl") != 0 || slash != name + len - 9)
            continue;
        if (found)
            return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: archive holds more than one data.pkl ('%s' and '%s')",
                             c->path, c->prefix, name);
        if (len - 8 >= sizeof c->prefix)
            return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: archive name is too long", c->path);
        memcpy(c->prefix, name, len - 8);
        c->prefix[len - 8] = '\0';
        found = 1;
    }
    if (!found)
        return samc_fail(c->err, SAMC_ERR_FORMAT,
                         "%s: zip archive has no '<name>/data.pkl' entry (not a torch.save checkpoint)",
                         c->path);
    char name[PT_MAX_NAME];
    snprintf(name, sizeof name, "%sdata.pkl", c->prefix);
    int f;
    samc_status st = stat_entry(c, name, pkl_idx, pkl_size, &f);
    if (!st && !f)
        st = samc_fail(c->err, SAMC_ERR_INTERNAL, "%s: lost entry '%s'", c->path, name);
    return st;
}

static samc_status check_byteorder(pt_ctx *c)
{
    char name[PT_MAX_NAME];
    snprintf(name, sizeof name, "%sbyteorder", c->prefix);
    zip_uint64_t idx, size;
    int found;
    samc_status st = stat_entry(c, name, &idx, &size, &found);
    if (st || !found)
        return st;
    uint8_t buf[16] = {0};
    if (size > 15)
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: '%s' has %llu bytes, expected 'little' or 'big'",
                         c->path, name, (unsigned long long)size);
    if ((st = read_entry(c, idx, name, buf, (size_t)size, size)))
        return st;
    if (size == 6 && memcmp(buf, "little", 6) == 0)
        return SAMC_OK;
    if (size == 3 && memcmp(buf, "big", 3) == 0)
        return samc_fail(c->err, SAMC_ERR_UNSUPPORTED,
                         "%s: checkpoint was saved big-endian (byteorder 'big'); only little-endian is supported",
                         c->path);
    return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: '%s' is neither 'little' nor 'big'", c->path, name);
}

static int dtype_kind(samc_pkl_dtype d, samc_elem_kind *k)
{
    switch (d) {
    case SAMC_PKL_DT_FLOAT: *k = SAMC_ELEM_F32; return 1;
    case SAMC_PKL_DT_HALF: *k = SAMC_ELEM_F16; return 1;
    case SAMC_PKL_DT_BFLOAT16: *k = SAMC_ELEM_BF16; return 1;
    default: return 0;
    }
}

/* Load the first `need` bytes of a storage of `nbytes` (numel * itemsize)
 * into the cache: only what the view reaches is allocated, so a 1-element
 * view of a storage declaring 2 GiB costs 4 bytes (and the time to inflate
 * the entry for its CRC). */
static samc_status load_storage(pt_ctx *c, const samc_pkl_obj *stor, const char *tkey, size_t nbytes, size_t need)
{
    const samc_pkl_obj *skey = stor->u.storage.key;
    if (c->cache_key && strcmp(c->cache_key, skey->u.str.s) == 0 &&
        c->cache_dtype == stor->u.storage.dtype && c->cache_bytes >= need)
        return SAMC_OK;
    free(c->cache_key);
    free(c->cache);
    c->cache_key = NULL;
    c->cache = NULL;
    c->cache_view = NULL;
    c->cache_bytes = 0;

    char kb[256];
    char name[PT_MAX_NAME];
    if (memchr(skey->u.str.s, '\0', skey->u.str.len) || skey->u.str.len > 1024)
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: key '%s': storage key '%s' is not a valid entry name",
                         c->path, tkey, pstr(skey, kb, sizeof kb));
    snprintf(name, sizeof name, "%sdata/%.1024s", c->prefix, skey->u.str.s);
    zip_uint64_t idx, size;
    int found;
    samc_status st = stat_entry(c, name, &idx, &size, &found);
    if (st)
        return st;
    if (!found)
        return samc_fail(c->err, SAMC_ERR_FORMAT,
                         "%s: key '%s': storage '%s' has no data entry '%s' in the archive", c->path,
                         tkey, pstr(skey, kb, sizeof kb), name);
    if (size < nbytes)
        return samc_fail(c->err, SAMC_ERR_FORMAT,
                         "%s: key '%s': storage '%s' entry '%s' has %llu bytes, but its numel %lld "
                         "needs %zu bytes",
                         c->path, tkey, pstr(skey, kb, sizeof kb), name, (unsigned long long)size,
                         (long long)stor->u.storage.numel, nbytes);
    const uint8_t *view = mapped_entry(c, name, size, nbytes);
    if (!view)
        nbytes = need;
    uint8_t *buf = view ? NULL : malloc(nbytes ? nbytes : 1);
    char *k = malloc(skey->u.str.len + 1);
    if ((!buf && !view) || !k) {
        free(buf);
        free(k);
        return samc_fail(c->err, SAMC_ERR_NOMEM, "%s: key '%s': out of memory reading storage '%s' (%zu bytes)",
                         c->path, tkey, pstr(skey, kb, sizeof kb), nbytes);
    }
    if ((view && (st = check_crc(c, idx, name, view, size))) ||
        (!view && (st = read_entry(c, idx, name, buf, nbytes, size)))) {
        free(buf);
        free(k);
        return st;
    }
    memcpy(k, skey->u.str.s, skey->u.str.len + 1);
    c->cache_key = k;
    c->cache = buf;
    c->cache_view = view;
    c->cache_bytes = nbytes;
    c->cache_dtype = stor->u.storage.dtype;
    return SAMC_OK;
}

/* A complex64 view as a float32 view with a trailing (re, im) dimension
 * of 2: shape + [2], strides doubled + [1], offset and storage doubled. */
static samc_status complex_as_pairs(pt_ctx *c, const char *tkey, int *nd, int64_t *shape, int64_t *stride,
                                    int64_t *off, int64_t *snumel)
{
    if (*nd + 1 > SAMC_MAX_DIMS || *snumel > INT64_MAX / 2 || *off > INT64_MAX / 2)
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: key '%s': complex tensor of absurd rank or size", c->path,
                         tkey);
    for (int i = 0; i < *nd; i++) {
        if (stride[i] > INT64_MAX / 2)
            return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: key '%s': complex tensor stride too large", c->path,
                             tkey);
        stride[i] *= 2;
    }
    shape[*nd] = 2, stride[*nd] = 1, (*nd)++;
    *off *= 2, *snumel *= 2;
    return SAMC_OK;
}

/* Turn one pickled tensor view into a contiguous float32 buffer; complex64
 * (RoPE tables) becomes (re, im) float pairs, one more dimension of 2, whose
 * shape is returned in *ndim_out / shape_out. *viewed: the data is a view
 * into the mapped file (not to be freed). */
static samc_status materialize(pt_ctx *c, const char *tkey, const samc_pkl_obj *t, float **out, int *ndim_out,
                               int64_t *shape_out, bool *viewed)
{
    *out = NULL;
    *viewed = false;
    const samc_pkl_obj *stor = t->u.tensor.storage;
    char kb[256];
    samc_elem_kind kind;
    const bool cplx = stor->u.storage.dtype == SAMC_PKL_DT_COMPLEX_FLOAT;
    if (cplx)
        kind = SAMC_ELEM_F32;
    else if (!dtype_kind(stor->u.storage.dtype, &kind))
        return samc_fail(c->err, SAMC_ERR_DTYPE,
                         "%s: key '%s': storage type torch.%s is not supported (only FloatStorage, "
                         "HalfStorage, BFloat16Storage and ComplexFloatStorage)",
                         c->path, tkey, samc_pkl_dtype_name(stor->u.storage.dtype));
    int nd = t->u.tensor.ndim;
    int64_t shape[SAMC_MAX_DIMS], stride[SAMC_MAX_DIMS];
    memcpy(shape, t->u.tensor.shape, sizeof shape);
    memcpy(stride, t->u.tensor.stride, sizeof stride);
    int64_t off = t->u.tensor.offset;
    int64_t snumel = stor->u.storage.numel;
    if (cplx) {
        samc_status st = complex_as_pairs(c, tkey, &nd, shape, stride, &off, &snumel);
        if (st)
            return st;
    }
    *ndim_out = nd;
    memcpy(shape_out, shape, sizeof shape);
    if (off < 0)
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: key '%s': negative storage offset %lld", c->path,
                         tkey, (long long)off);
    int64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        if (shape[i] < 0)
            return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: key '%s': negative dimension %lld", c->path,
                             tkey, (long long)shape[i]);
        if (stride[i] < 0)
            return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: key '%s': negative stride %lld", c->path,
                             tkey, (long long)stride[i]);
        if (shape[i] && numel > PT_MAX_NUMEL / shape[i])
            numel = PT_MAX_NUMEL + 1;
        else
            numel *= shape[i];
    }
    if (numel > PT_MAX_NUMEL)
        return samc_fail(c->err, SAMC_ERR_NOMEM,
                         "%s: key '%s': tensor has more than %lld elements (absurd size)", c->path, tkey,
                         (long long)PT_MAX_NUMEL);
    size_t isz = samc_elem_size(kind);
    if (snumel > PT_MAX_STORAGE_BYTES / (int64_t)isz)
        return samc_fail(c->err, SAMC_ERR_NOMEM,
                         "%s: key '%s': storage '%s' claims %lld elements (absurd size)", c->path, tkey,
                         pstr(stor->u.storage.key, kb, sizeof kb), (long long)snumel);
    /* highest storage index touched; every term is checked for overflow */
    int64_t maxidx = off;
    if (numel > 0) {
        for (int i = 0; i < nd; i++) {
            int64_t ext = shape[i] - 1;
            if (stride[i] && ext > (INT64_MAX - maxidx) / stride[i]) {
                maxidx = INT64_MAX;
                break;
            }
            maxidx += ext * stride[i];
        }
        if (maxidx >= snumel) {
            char sh[200], sd[200];
            samc_shape_str(nd, shape, sh, sizeof sh);
            samc_shape_str(nd, stride, sd, sizeof sd);
            return samc_fail(c->err, SAMC_ERR_FORMAT,
                             "%s: key '%s': tensor view (offset %lld, size %s, stride %s) reaches "
                             "element %lld outside storage '%s' of %lld elements",
                             c->path, tkey, (long long)off, sh, sd, (long long)maxidx,
                             pstr(stor->u.storage.key, kb, sizeof kb), (long long)snumel);
        }
    }
    /* Views may repeat storage elements (stride 0, overlapping views), so
     * the floats produced are bounded by the file size too: a few KiB of
     * checkpoint must not expand into gigabytes. */
    if (numel > 0) { /* the storage first: its entry must hold the bytes numel needs */
        samc_status st = load_storage(c, stor, tkey, (size_t)snumel * isz, (size_t)(maxidx + 1) * isz);
        if (st)
            return st;
    }
    /* contiguous (C order) check, ignoring size-1 dimensions */
    int contiguous = 1;
    int64_t expect = 1;
    for (int i = nd - 1; i >= 0; i--) {
        if (shape[i] != 1 && stride[i] != expect) {
            contiguous = 0;
            break;
        }
        expect *= shape[i];
    }
    const uint8_t *base = c->cache_view ? c->cache_view : c->cache;
    /* float32 little-endian data of a stored entry of the mapped file: used
     * where it lies (no copy), kept alive by the store */
    if (numel > 0 && contiguous && kind == SAMC_ELEM_F32 && c->cache_view &&
        __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (uintptr_t)(base + (size_t)off * isz) % sizeof(float) == 0) {
        *out = (float *)(uintptr_t)(base + (size_t)off * isz);
        *viewed = true;
        return SAMC_OK;
    }
    c->total_floats += numel;
    if (c->total_floats > c->max_total_floats)
        return samc_fail(c->err, SAMC_ERR_NOMEM,
                         "%s: key '%s': the tensors would take %lld floats from a file of %llu bytes (views "
                         "repeating their storage? absurd size)",
                         c->path, tkey, (long long)c->total_floats, (unsigned long long)c->file_size);
    float *dst = malloc((size_t)(numel ? numel : 1) * sizeof(float));
    if (!dst)
        return samc_fail(c->err, SAMC_ERR_NOMEM, "%s: key '%s': out of memory for %lld floats", c->path,
                         tkey, (long long)numel);
    if (numel == 0) {
        *out = dst;
        return SAMC_OK;
    }
    if (contiguous) {
        samc_decode_elems(kind, base + (size_t)off * isz, (size_t)numel, dst);
    } else {
        /* odometer over all but the last dimension; the last is a strided run */
        int64_t idx[SAMC_MAX_DIMS] = {0};
        int64_t inner = nd ? shape[nd - 1] : 1;
        int64_t istride = nd ? stride[nd - 1] : 0;
        int64_t pos = off;
        size_t o = 0;
        for (;;) {
            if (istride == 1) {
                samc_decode_elems(kind, base + (size_t)pos * isz, (size_t)inner, dst + o);
                o += (size_t)inner;
            } else {
                for (int64_t j = 0; j < inner; j++)
                    samc_decode_elems(kind, base + (size_t)(pos + j * istride) * isz, 1, dst + o++);
            }
            int d = nd - 2;
            while (d >= 0) {
                idx[d]++;
                pos += stride[d];
                if (idx[d] < shape[d])
                    break;
                pos -= stride[d] * shape[d];
                idx[d] = 0;
                d--;
            }
            if (d < 0)
                break;
        }
    }
    *out = dst;
    return SAMC_OK;
}

/* Pick the state dict: root["model"], else root when its values are tensors. */
static samc_status select_state_dict(pt_ctx *c, const samc_pkl_obj *root, const samc_pkl_obj **sd)
{
    char kb[256];
    if (root->type != SAMC_PKL_DICT)
        return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: checkpoint holds a %s, not a dict", c->path,
                         samc_pkl_type_name(root->type));
    const samc_pkl_obj *m = samc_pkl_dict_get(root, "model");
    if (m) {
        if (m->type != SAMC_PKL_DICT)
            return samc_fail(c->err, SAMC_ERR_FORMAT, "%s: checkpoint entry 'model' is a %s, not a state dict",
                             c->path, samc_pkl_type_name(m->type));
        *sd = m;
        return SAMC_OK;
    }
    for (size_t i = 0; i < root->u.dict.n; i++) {
        const samc_pkl_obj *k = root->u.dict.kv[2 * i], *v = root->u.dict.kv[2 * i + 1];
        if (v->type != SAMC_PKL_TENSOR)
            return samc_fail(c->err, SAMC_ERR_FORMAT,
                             "%s: checkpoint has no 'model' entry and its top-level entry '%s' is a %s, "
                             "not a tensor",
                             c->path, k->type == SAMC_PKL_STR ? pstr(k, kb, sizeof kb) : "?",
                             samc_pkl_type_name(v->type));
    }
    *sd = root;
    return SAMC_OK;
}

static samc_status load_pt(pt_ctx *c, samc_weights *w)
{
    zip_uint64_t pkl_idx, pkl_size;
    samc_status st = find_archive(c, &pkl_idx, &pkl_size);
    if (st || (st = check_byteorder(c)))
        return st;
    char pname[PT_MAX_NAME + 8];
    snprintf(pname, sizeof pname, "%sdata.pkl", c->prefix);
    if (pkl_size > SAMC_PKL_MAX_BYTES)
        return samc_fail(c->err, SAMC_ERR_NOMEM, "%s: '%s' is %llu bytes, more than the limit of %u",
                         c->path, pname, (unsigned long long)pkl_size, SAMC_PKL_MAX_BYTES);
    /* torch.save stores data.pkl uncompressed; a deflated one may not
     * inflate more than PT_MAX_PKL_RATIO times (each pickle byte can cost
     * SAMC_PKL_BYTES_PER_BYTE of memory). */
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(c->za, pkl_idx, 0, &zs) == 0 && (zs.valid & ZIP_STAT_COMP_SIZE) &&
        pkl_size > (zip_uint64_t)PT_MAX_PKL_RATIO * zs.comp_size + (1u << 20))
        return samc_fail(c->err, SAMC_ERR_NOMEM,
                         "%s: '%s' inflates from %llu to %llu bytes (more than %d times: a decompression bomb?)",
                         c->path, pname, (unsigned long long)zs.comp_size, (unsigned long long)pkl_size,
                         PT_MAX_PKL_RATIO);
    uint8_t *pkl = malloc(pkl_size ? (size_t)pkl_size : 1);
    if (!pkl)
        return samc_fail(c->err, SAMC_ERR_NOMEM, "%s: out of memory", c->path);
    if ((st = read_entry(c, pkl_idx, pname, pkl, (size_t)pkl_size, pkl_size))) {
        free(pkl);
        return st;
    }
    char source[PT_MAX_NAME + 1100];
    snprintf(source, sizeof source, "%s: %s", c->path, pname);
    samc_pickle *pk = NULL;
    st = samc_pickle_load(pkl, (size_t)pkl_size, source, &pk, c->err);
    free(pkl);
    if (st)
        return st;
    const samc_pkl_obj *sd = NULL;
    st = select_state_dict(c, samc_pickle_root(pk), &sd);
    if (!st && sd->u.dict.n == 0)
        st = samc_fail(c->err, SAMC_ERR_FORMAT, "%s: the state dict holds no tensors", c->path);
    for (size_t i = 0; !st && i < sd->u.dict.n; i++) {
        const samc_pkl_obj *k = sd->u.dict.kv[2 * i], *v = sd->u.dict.kv[2 * i + 1];
        char kb[256];
        if (k->type != SAMC_PKL_STR) {
            st = samc_fail(c->err, SAMC_ERR_FORMAT, "%s: state dict key #%zu is a %s, not a string",
                           c->path, i, samc_pkl_type_name(k->type));
            break;
        }
        if (memchr(k->u.str.s, '\0', k->u.str.len)) {
            st = samc_fail(c->err, SAMC_ERR_FORMAT, "%s: state dict key '%s' contains a NUL byte", c->path,
                           pstr(k, kb, sizeof kb));
            break;
        }
        if (v->type != SAMC_PKL_TENSOR) {
            st = samc_fail(c->err, SAMC_ERR_FORMAT, "%s: state dict entry '%s' is a %s, not a tensor",
                           c->path, pstr(k, kb, sizeof kb), samc_pkl_type_name(v->type));
            break;
        }
        float *data = NULL;
        int nd = 0;
        int64_t shape[SAMC_MAX_DIMS];
        bool viewed = false;
        if ((st = materialize(c, k->u.str.s, v, &data, &nd, shape, &viewed)))
            break;
        st = viewed ? samc_weights_add_view(w, k->u.str.s, nd, shape, data, c->err)
                    : samc_weights_add(w, k->u.str.s, nd, shape, data, c->err);
        c->views += viewed && !st;
    }
    samc_pickle_free(pk);
    return st;
}

samc_status samc_weights_open_pt(const char *path, samc_weights **out, samc_error *err)
{
    *out = NULL;
    if (!path)
        return samc_fail(err, SAMC_ERR_ARG, "samc_weights_open_pt: NULL path");
    /* Open ourselves first for a clear message on missing/unreadable files. */
    uint8_t head[4];
    size_t got;
    uint64_t fsize;
    samc_status st = samc_file_head(path, head, sizeof head, &got, &fsize, err);
    if (st)
        return st;
    if (got == 0)
        return samc_fail(err, SAMC_ERR_IO, "%s: file is empty", path);
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        st = samc_fail(err, zip_status(zerr),
                       "%s: not a readable zip archive: %s (truncated or corrupt checkpoint?)", path,
                       zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return st;
    }
    samc_weights *w = samc_weights_new(path);
    if (!w) {
        zip_discard(za);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", path);
    }
    samc_weights_set_format(w, SAMC_WEIGHTS_PT);
    pt_ctx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.za = za;
    c.err = err;
    c.file_size = fsize;
    /* 8 floats per file byte (f16 storages give 2, views sharing storage a
     * little more) plus 64 Mi floats of slack. */
    c.max_total_floats = (int64_t)(fsize < ((uint64_t)1 << 56) ? fsize : ((uint64_t)1 << 56)) * 8 + ((int64_t)1 << 26);
    st = samc_file_map(path, &c.map, err);
    if (!st && (st = samc__zip_check_directory(c.map.data, c.map.size, za, path, err)) == SAMC_OK) {
        if (c.map.mapped) /* else every entry is read through libzip */
            index_locals(&c);
        st = load_pt(&c, w);
    }
    free(c.cache_key);
    free(c.cache);
    free(c.locals);
    zip_discard(za);
    if (!st && c.views)
        samc_weights_adopt_map(w, &c.map); /* the views' data: unmapped with the store */
    if (st) {
        samc_weights_free(w);
        samc_file_unmap(&c.map);
        return st;
    }
    samc_file_unmap(&c.map); /* nothing (left) to keep: a no-op after adopt */
    *out = w;
    return SAMC_OK;
}
