/* SPDX-License-Identifier: Apache-2.0 */
#include "core/base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/error.h"

static samc_status open_regular(const char *path, int *fd_out, uint64_t *size, samc_error *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
     * refused as not a regular file); no effect on regular files. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open file: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot stat file: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return samc_fail(err, SAMC_ERR_IO, "%s: not a regular file", path);
    }
    *fd_out = fd;
    *size = (uint64_t)sb.st_size;
    return SAMC_OK;
}

static samc_status read_full(int fd, const char *path, uint8_t *buf, size_t n, size_t *got,
                             samc_error *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, buf + done, n - done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return samc_fail(err, SAMC_ERR_IO, "%s: read error: %s", path, strerror(errno));
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *got = done;
    return SAMC_OK;
}

samc_status samc_file_map(const char *path, samc_mapped_file *mf, samc_error *err)
{
    memset(mf, 0, sizeof *mf);
    int fd;
    uint64_t size;
    samc_status st = open_regular(path, &fd, &size, err);
    if (st)
        return st;
    if (size == 0) {
        close(fd);
        return SAMC_OK;
    }
    if (size > (uint64_t)SIZE_MAX / 2) {
        close(fd);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: file too large to map (%llu bytes)", path,
                         (unsigned long long)size);
    }
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
        close(fd);
        mf->data = p;
        mf->size = (size_t)size;
        mf->mapped = 1;
        return SAMC_OK;
    }
    uint8_t *buf = malloc((size_t)size);
    if (!buf) {
        close(fd);
        return samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory reading %llu bytes", path,
                         (unsigned long long)size);
    }
    size_t got = 0;
    st = read_full(fd, path, buf, (size_t)size, &got, err);
    close(fd);
    if (!st && got != size)
        st = samc_fail(err, SAMC_ERR_IO, "%s: file shrank while reading", path);
    if (st) {
        free(buf);
        return st;
    }
    mf->data = buf;
    mf->size = (size_t)size;
    return SAMC_OK;
}

void samc_file_unmap(samc_mapped_file *mf)
{
    if (!mf)
        return;
    if (mf->data) {
        if (mf->mapped)
            munmap((void *)mf->data, mf->size);
        else
            free((void *)mf->data);
    }
    memset(mf, 0, sizeof *mf);
}

samc_status samc_check_regular(const char *path, samc_error *err)
{
    int fd = -1;
    uint64_t size = 0;
    samc_status st = open_regular(path, &fd, &size, err);
    if (!st)
        close(fd);
    return st;
}

samc_status samc_file_head(const char *path, void *buf, size_t cap, size_t *got, uint64_t *file_size,
                           samc_error *err)
{
    int fd;
    uint64_t size;
    *got = 0;
    samc_status st = open_regular(path, &fd, &size, err);
    if (st)
        return st;
    if (file_size)
        *file_size = size;
    st = read_full(fd, path, buf, cap, got, err);
    close(fd);
    return st;
}

uint16_t samc_load_u16le(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

uint32_t samc_load_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

uint64_t samc_load_u64le(const uint8_t *p)
{
    return (uint64_t)samc_load_u32le(p) | ((uint64_t)samc_load_u32le(p + 4) << 32);
}

static float bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float samc_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { /* subnormal half -> normal float */
            uint32_t e = 127 - 15 + 1;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                e--;
            }
            mant &= 0x3ffu;
            bits = sign | (e << 23) | (mant << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    return bits_to_f32(bits);
}

float samc_bf16_to_f32(uint16_t b) { return bits_to_f32((uint32_t)b << 16); }

size_t samc_elem_size(samc_elem_kind k) { return k == SAMC_ELEM_F32 ? 4 : 2; }

void samc_decode_elems(samc_elem_kind k, const uint8_t *src, size_t n, float *dst)
{
    switch (k) {
    case SAMC_ELEM_F32:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(dst, src, n * 4);
#else
        for (size_t i = 0; i < n; i++)
            dst[i] = bits_to_f32(samc_load_u32le(src + 4 * i));
#endif
        break;
    case SAMC_ELEM_F16:
        for (size_t i = 0; i < n; i++)
            dst[i] = samc_f16_to_f32(samc_load_u16le(src + 2 * i));
        break;
    case SAMC_ELEM_BF16:
        for (size_t i = 0; i < n; i++)
            dst[i] = samc_bf16_to_f32(samc_load_u16le(src + 2 * i));
        break;
    }
}
