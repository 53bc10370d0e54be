/* SPDX-License-Identifier: Apache-2.0 */
/* dump_weights.c - the /weights group of HDF5 parity dumps: a dump as a
 * checkpoint (samc_weights_open_h5 of core/io/weights.h forwards here once
 * the parity harness has installed its reader, dump_install.c).
 *
 * Every dataset below /weights is one tensor; its path relative to
 * /weights is the key ('/' in nested layouts becomes '.'; flat dumps use
 * the state_dict key, dots included, as the dataset name). Float datasets
 * of any width are read through H5T_NATIVE_FLOAT. Only hard links are
 * followed (no soft or external links). The HDF5 automatic error printing
 * is switched off for the duration of the call and restored afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "core/io/weights.h"
#include "parity/dump_reader.h"
#include "parity/h5_guard.h"

#define H5_MAX_NUMEL ((int64_t)1 << 31)

typedef struct h5_names {
    char **v;
    size_t n, cap;
    samc_status st;
    const char *path;
    samc_error *err;
} h5_names;

static herr_t visit_cb(hid_t g, const char *name, const H5L_info_t *info, void *op_data)
{
    h5_names *nl = op_data;
    if (info->type != H5L_TYPE_HARD) {
        nl->st = samc_fail(nl->err, SAMC_ERR_FORMAT,
                           "%s: '/weights/%s' is a soft or external link; only datasets are allowed",
                           nl->path, name);
        return -1;
    }
    H5O_info_t oi;
    if (H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        nl->st = samc_fail(nl->err, SAMC_ERR_FORMAT, "%s: cannot inspect '/weights/%s' (corrupt file?)",
                           nl->path, name);
        return -1;
    }
    if (oi.type == H5O_TYPE_GROUP)
        return 0;
    if (oi.type != H5O_TYPE_DATASET) {
        nl->st = samc_fail(nl->err, SAMC_ERR_FORMAT, "%s: '/weights/%s' is not a dataset", nl->path, name);
        return -1;
    }
    if (nl->n == nl->cap) {
        size_t ncap = nl->cap ? nl->cap * 2 : 64;
        char **nv = realloc(nl->v, ncap * sizeof *nv);
        if (!nv) {
            nl->st = samc_fail(nl->err, SAMC_ERR_NOMEM, "%s: out of memory", nl->path);
            return -1;
        }
        nl->v = nv;
        nl->cap = ncap;
    }
    size_t len = strlen(name) + 1;
    char *s = malloc(len);
    if (!s) {
        nl->st = samc_fail(nl->err, SAMC_ERR_NOMEM, "%s: out of memory", nl->path);
        return -1;
    }
    memcpy(s, name, len);
    nl->v[nl->n++] = s;
    return 0;
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
    }
}

static samc_status read_dataset(const char *path, hid_t wg, const char *name, samc_weights *w,
                                samc_error *err)
{
    samc_status st = SAMC_OK;
    hid_t ds = -1, ty = -1, sp = -1;
    float *buf = NULL;
    int64_t shape[SAMC_MAX_DIMS] = {0};
    int nd = 0;
    char key[1024];
    snprintf(key, sizeof key, "%s", name);
    for (char *p = key; *p; p++)
        if (*p == '/')
            *p = '.';

    ds = H5Dopen2(wg, name, H5P_DEFAULT);
    if (ds < 0) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot open dataset '/weights/%s'", path, name);
        goto done;
    }
    ty = H5Dget_type(ds);
    H5T_class_t cls = ty < 0 ? H5T_NO_CLASS : H5Tget_class(ty);
    if (cls != H5T_FLOAT) {
        st = samc_fail(err, SAMC_ERR_DTYPE,
                       "%s: dataset '/weights/%s' has %s elements; weights must be floating point",
                       path, name, class_name(cls));
        goto done;
    }
    sp = H5Dget_space(ds);
    H5S_class_t scls = sp < 0 ? H5S_NO_CLASS : H5Sget_simple_extent_type(sp);
    if (scls == H5S_SCALAR) {
        nd = 0;
    } else if (scls == H5S_SIMPLE) {
        int r = H5Sget_simple_extent_ndims(sp);
        if (r < 0 || r > SAMC_MAX_DIMS) {
            st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: dataset '/weights/%s' has rank %d (max %d)", path,
                           name, r, SAMC_MAX_DIMS);
            goto done;
        }
        hsize_t dims[SAMC_MAX_DIMS];
        if (H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot read the shape of '/weights/%s'", path, name);
            goto done;
        }
        nd = r;
        int64_t numel = 1;
        for (int i = 0; i < nd; i++) {
            if (dims[i] > (hsize_t)H5_MAX_NUMEL || (dims[i] && numel > H5_MAX_NUMEL / (int64_t)dims[i])) {
                st = samc_fail(err, SAMC_ERR_NOMEM,
                               "%s: dataset '/weights/%s' has more than %lld elements (absurd size)",
                               path, name, (long long)H5_MAX_NUMEL);
                goto done;
            }
            shape[i] = (int64_t)dims[i];
            numel *= shape[i];
        }
    } else {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: dataset '/weights/%s' has an empty (null) dataspace",
                       path, name);
        goto done;
    }
    int64_t numel = samc_shape_numel(nd, shape);
    const char *why = samc_h5_dataset_problem(ds, numel, H5Tget_size(ty));
    if (why) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: dataset '/weights/%s': %s", path, name, why);
        goto done;
    }
    buf = malloc((size_t)(numel ? numel : 1) * sizeof(float));
    if (!buf) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "%s: dataset '/weights/%s': out of memory for %lld floats",
                       path, name, (long long)numel);
        goto done;
    }
    if (numel && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        st = samc_fail(err, SAMC_ERR_FORMAT,
                       "%s: cannot read dataset '/weights/%s' (file truncated or corrupt?)", path, name);
        goto done;
    }
    st = samc_weights_add(w, key, nd, shape, buf, err);
    buf = NULL; /* owned by the store now, even on failure */
done:
    free(buf);
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return st;
}

static samc_status load_h5(const char *path, hid_t f, samc_weights *w, samc_error *err)
{
    htri_t has = H5Lexists(f, "weights", H5P_DEFAULT);
    if (has <= 0)
        return samc_fail(err, SAMC_ERR_KEY, "%s: HDF5 file has no /weights group", path);
    H5O_info_t oi;
    if (H5Oget_info_by_name2(f, "weights", &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        oi.type != H5O_TYPE_GROUP)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: /weights is not a group", path);
    hid_t wg = H5Gopen2(f, "weights", H5P_DEFAULT);
    if (wg < 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot open the /weights group", path);
    h5_names nl;
    memset(&nl, 0, sizeof nl);
    nl.path = path;
    nl.err = err;
    /* creation order when the file tracks it, else name order */
    herr_t r = H5Lvisit(wg, H5_INDEX_CRT_ORDER, H5_ITER_INC, visit_cb, &nl);
    if (r < 0 && !nl.st) {
        for (size_t i = 0; i < nl.n; i++)
            free(nl.v[i]);
        nl.n = 0;
        r = H5Lvisit(wg, H5_INDEX_NAME, H5_ITER_INC, visit_cb, &nl);
    }
    samc_status st = nl.st;
    if (!st && r < 0)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot list the /weights group (corrupt file?)", path);
    for (size_t i = 0; !st && i < nl.n; i++)
        st = read_dataset(path, wg, nl.v[i], w, err);
    for (size_t i = 0; i < nl.n; i++)
        free(nl.v[i]);
    free(nl.v);
    H5Gclose(wg);
    return st;
}

samc_status samc__dump_open_weights(const char *path, samc_weights **out, samc_error *err)
{
    *out = NULL;
    if (!path)
        return samc_fail(err, SAMC_ERR_ARG, "samc_weights_open_h5: NULL path");
    uint8_t head[8];
    size_t got;
    uint64_t fsize;
    samc_status st = samc_file_head(path, head, sizeof head, &got, &fsize, err);
    if (st)
        return st;
    if (got == 0)
        return samc_fail(err, SAMC_ERR_IO, "%s: file is empty", path);

    H5E_auto2_t old_fn = NULL;
    void *old_data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_file_locking(fapl, 0, 1);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0)
        H5Pclose(fapl);
    samc_weights *w = NULL;
    if (f < 0) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot open as an HDF5 file (truncated or corrupt?)", path);
        goto done;
    }
    w = samc_weights_new(path);
    if (!w) {
        st = samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    samc_weights_set_format(w, SAMC_WEIGHTS_H5);
    st = load_h5(path, f, w, err);
done:
    if (f >= 0)
        H5Fclose(f);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    if (st) {
        samc_weights_free(w);
        return st;
    }
    *out = w;
    return SAMC_OK;
}
