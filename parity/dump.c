/* SPDX-License-Identifier: Apache-2.0 */
/* dump.c - HDF5 parity dumps through the HDF5 C library. The automatic HDF5
 * error stack printing is switched off; every failure becomes one message
 * naming the file and the object. */
#include "dump.h"

#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "parity/h5_guard.h"

struct samc_dump {
    hid_t file;
    char *path;
};

const char *samc_dump_path(const samc_dump *d) { return d->path; }

samc_status samc_dump_open(const char *path, samc_dump **out, samc_error *err)
{
    *out = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (samc_check_regular(path, NULL)) /* a FIFO, device or directory: refused without blocking */
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open dump (no such file, unreadable or not a regular file)", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open dump (no such file or unreadable)", path);
    unsigned char sig[8] = {0};
    size_t got = fread(sig, 1, 8, f);
    fclose(f);
    if (got < 8 || memcmp(sig, "\x89HDF\r\n\x1a\n", 8))
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: not an HDF5 parity dump (bad signature)", path);
    /* Same access properties as parity/dump_weights.c (no file locking: dumps
     * are read-only inputs), since HDF5 refuses to open one file twice in a
     * process with different locking settings. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_file_locking(fapl, 0, 1);
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (h < 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: HDF5 cannot open it (truncated or corrupt)", path);
    samc_dump *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        H5Fclose(h);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    d->file = h;
    char *fmt = NULL;
    samc_status st = samc_dump_attr_str(d, "/", "format", &fmt, err);
    if (!st && strcmp(fmt, "samc-parity-dump"))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: root attribute format is '%s', expected 'samc-parity-dump'", path, fmt);
    free(fmt);
    double ver = 0;
    if (!st && !(st = samc_dump_attr_num(d, "/", "format_version", &ver, NULL, err)) && ver != 1)
        st = samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: format_version %g is not supported (samc reads 1)", path, ver);
    if (st) {
        samc_dump_close(d);
        return st;
    }
    *out = d;
    return SAMC_OK;
}

void samc_dump_close(samc_dump *d)
{
    if (!d)
        return;
    H5Fclose(d->file);
    free(d->path);
    free(d);
}

bool samc_dump_exists(samc_dump *d, const char *path)
{
    /* H5Lexists needs every intermediate link to exist: walk the path. */
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (H5Lexists(d->file, buf, H5P_DEFAULT) <= 0)
                return false;
            if (c == '\0')
                return true;
            *p = c;
        }
    }
}

bool samc_dump_has_attr(samc_dump *d, const char *obj, const char *attr)
{
    return (strcmp(obj, "/") == 0 || samc_dump_exists(d, obj)) &&
           H5Aexists_by_name(d->file, obj, attr, H5P_DEFAULT) > 0;
}

/* "/format" for the root, "/model/family" below it. */
#define SEP(obj) (strcmp((obj), "/") ? "/" : "")

static hid_t open_attr(samc_dump *d, const char *obj, const char *attr, samc_error *err)
{
    if (!samc_dump_has_attr(d, obj, attr)) {
        samc_fail(err, SAMC_ERR_KEY, "%s: missing attribute %s%s%s", d->path, obj, strcmp(obj, "/") ? "/" : "", attr);
        return -1;
    }
    return H5Aopen_by_name(d->file, obj, attr, H5P_DEFAULT, H5P_DEFAULT);
}

samc_status samc_dump_attr_str(samc_dump *d, const char *obj, const char *attr, char **out, samc_error *err)
{
    *out = NULL;
    hid_t a = open_attr(d, obj, attr, err);
    if (a < 0)
        return err && err->status ? err->status : SAMC_ERR_KEY;
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    samc_status st = SAMC_OK;
    /* One string only: H5Aread writes every element of the attribute's
     * dataspace, and the buffers below hold one. */
    const hssize_t npoints = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    if (sp >= 0)
        H5Sclose(sp);
    if (H5Tget_class(t) != H5T_STRING) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: attribute %s%s%s is not a string", d->path, obj, SEP(obj), attr);
    } else if (npoints != 1) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: attribute %s%s%s holds %lld strings, expected one", d->path, obj,
                       SEP(obj), attr, (long long)npoints);
    } else if (H5Tis_variable_str(t) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(t));
        char *s = NULL;
        if (H5Aread(a, mt, &s) < 0 || !s)
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot read string attribute %s/%s", d->path, obj, attr);
        else if (!(*out = strdup(s)))
            st = samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        if (s)
            H5free_memory(s);
        H5Tclose(mt);
    } else {
        size_t n = H5Tget_size(t);
        if (n == 0 || n > ((size_t)1 << 26)) {
            H5Tclose(t);
            H5Aclose(a);
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: string attribute %s%s%s has an unusable size (%zu bytes)",
                             d->path, obj, SEP(obj), attr, n);
        }
        *out = calloc(n + 1, 1);
        hid_t mt = H5Tcopy(t);
        if (!*out || H5Aread(a, mt, *out) < 0)
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot read string attribute %s/%s", d->path, obj, attr);
        H5Tclose(mt);
    }
    if (st) {
        free(*out);
        *out = NULL;
    }
    H5Tclose(t);
    H5Aclose(a);
    return st;
}

samc_status samc_dump_attr_num(samc_dump *d, const char *obj, const char *attr, double *out, bool *is_none,
                               samc_error *err)
{
    if (is_none)
        *is_none = false;
    hid_t a = open_attr(d, obj, attr, err);
    if (a < 0)
        return err && err->status ? err->status : SAMC_ERR_KEY;
    hid_t s = H5Aget_space(a), t = H5Aget_type(a);
    samc_status st = SAMC_OK;
    H5T_class_t cls = H5Tget_class(t);
    if (H5Sget_simple_extent_type(s) == H5S_NULL) {
        if (is_none)
            *is_none = true;
        else
            st = samc_fail(err, SAMC_ERR_FORMAT, "%s: attribute %s/%s is None", d->path, obj, attr);
    } else if ((cls != H5T_INTEGER && cls != H5T_FLOAT && cls != H5T_ENUM) || H5Sget_simple_extent_npoints(s) != 1) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: attribute %s/%s is not a number", d->path, obj, attr);
    } else if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0) {
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot read attribute %s/%s", d->path, obj, attr);
    }
    H5Sclose(s);
    H5Tclose(t);
    H5Aclose(a);
    return st;
}

/* Open a numeric dataset and read its dims. */
static hid_t open_dataset(samc_dump *d, const char *path, int *ndim, int64_t *dims, int maxdims, samc_error *err)
{
    if (!samc_dump_exists(d, path)) {
        samc_fail(err, SAMC_ERR_KEY, "%s: missing dataset %s", d->path, path);
        return -1;
    }
    hid_t ds = H5Dopen2(d->file, path, H5P_DEFAULT);
    if (ds < 0) {
        samc_fail(err, SAMC_ERR_FORMAT, "%s: %s is not a dataset", d->path, path);
        return -1;
    }
    hid_t sp = H5Dget_space(ds), t = H5Dget_type(ds);
    int nd = H5Sget_simple_extent_ndims(sp);
    H5T_class_t cls = H5Tget_class(t);
    hsize_t hd[16] = {0};
    bool ok = nd >= 0 && nd <= maxdims && (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_ENUM) &&
              H5Sget_simple_extent_dims(sp, hd, NULL) >= 0;
    /* element count with overflow checks, then the storage checks */
    int64_t numel = 1;
    for (int i = 0; ok && i < nd; i++) {
        if (hd[i] > (hsize_t)SAMC_H5_MAX_NUMEL || (hd[i] && numel > SAMC_H5_MAX_NUMEL / (int64_t)hd[i]))
            numel = SAMC_H5_MAX_NUMEL + 1;
        else
            numel *= (int64_t)hd[i];
    }
    const char *why = ok ? samc_h5_dataset_problem(ds, numel, H5Tget_size(t)) : NULL;
    H5Sclose(sp);
    H5Tclose(t);
    if (!ok || why) {
        H5Dclose(ds);
        if (why)
            samc_fail(err, SAMC_ERR_FORMAT, "%s: dataset %s: %s", d->path, path, why);
        else
            samc_fail(err, SAMC_ERR_FORMAT, "%s: dataset %s is not a numeric array of rank <= %d", d->path, path, maxdims);
        return -1;
    }
    *ndim = nd;
    for (int i = 0; i < nd; i++)
        dims[i] = (int64_t)hd[i];
    return ds;
}

static samc_status read_into(samc_dump *d, hid_t ds, hid_t memtype, void *buf, const char *path, samc_error *err)
{
    herr_t r = H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(ds);
    return r < 0 ? samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot read dataset %s (corrupt or truncated)", d->path, path)
                 : SAMC_OK;
}

samc_status samc_dump_read(samc_dump *d, const char *path, samc_tensor *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    int nd;
    int64_t dims[SAMC_MAX_DIMS];
    hid_t ds = open_dataset(d, path, &nd, dims, SAMC_MAX_DIMS, err);
    if (ds < 0)
        return err && err->status ? err->status : SAMC_ERR_FORMAT;
    samc_status st = samc_tensor_alloc(out, nd, dims, err);
    if (st) {
        H5Dclose(ds);
        return st;
    }
    st = read_into(d, ds, H5T_NATIVE_FLOAT, out->data, path, err);
    if (st)
        samc_tensor_release(out);
    return st;
}

samc_status samc_dump_read_u8(samc_dump *d, const char *path, uint8_t **data, int *ndim, int64_t *dims,
                              samc_error *err)
{
    *data = NULL;
    hid_t ds = open_dataset(d, path, ndim, dims, 4, err);
    if (ds < 0)
        return err && err->status ? err->status : SAMC_ERR_FORMAT;
    int64_t n = samc_shape_numel(*ndim, dims);
    if (n <= 0 || n > ((int64_t)1 << 34)) {
        H5Dclose(ds);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: dataset %s has an unusable size", d->path, path);
    }
    if (!(*data = malloc((size_t)n))) {
        H5Dclose(ds);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_status st = read_into(d, ds, H5T_NATIVE_UCHAR, *data, path, err);
    if (st)
        free(*data), *data = NULL;
    return st;
}

samc_status samc_dump_read_i32(samc_dump *d, const char *path, int32_t **data, int64_t *n, samc_error *err)
{
    int nd;
    int64_t dims[SAMC_MAX_DIMS];
    *data = NULL;
    hid_t ds = open_dataset(d, path, &nd, dims, SAMC_MAX_DIMS, err);
    if (ds < 0)
        return err && err->status ? err->status : SAMC_ERR_FORMAT;
    *n = samc_shape_numel(nd, dims);
    if (!(*data = malloc((size_t)(*n ? *n : 1) * sizeof(int32_t)))) {
        H5Dclose(ds);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_status st = read_into(d, ds, H5T_NATIVE_INT32, *data, path, err);
    if (st)
        free(*data), *data = NULL;
    return st;
}

samc_status samc_dump_read_f64(samc_dump *d, const char *path, double **data, int *ndim, int64_t *dims, int max_dims,
                               samc_error *err)
{
    *data = NULL;
    hid_t ds = open_dataset(d, path, ndim, dims, max_dims, err);
    if (ds < 0)
        return err && err->status ? err->status : SAMC_ERR_FORMAT;
    const int64_t n = samc_shape_numel(*ndim, dims);
    if (n < 0 || n > ((int64_t)1 << 28)) {
        H5Dclose(ds);
        return samc_fail(err, SAMC_ERR_SHAPE, "%s: dataset %s has an implausible size", d->path, path);
    }
    if (!(*data = malloc((size_t)(n ? n : 1) * sizeof(double)))) {
        H5Dclose(ds);
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    }
    samc_status st = read_into(d, ds, H5T_NATIVE_DOUBLE, *data, path, err);
    if (st)
        free(*data), *data = NULL;
    return st;
}

/* A record's obj_ids attribute (the tracker state's objects, batch order):
 * how many (0 when unreadable or more than SAMC_DUMP_MAX_OBJS). */
static int read_obj_ids(samc_dump *d, const char *g, int *objs)
{
    hid_t a = open_attr(d, g, "obj_ids", NULL);
    if (a < 0)
        return 0;
    hid_t sp = H5Aget_space(a), t = H5Aget_type(a);
    const hssize_t n = H5Sget_simple_extent_npoints(sp);
    long long v[SAMC_DUMP_MAX_OBJS];
    int got = 0;
    if (H5Tget_class(t) == H5T_INTEGER && n > 0 && n <= SAMC_DUMP_MAX_OBJS && H5Aread(a, H5T_NATIVE_LLONG, v) >= 0)
        for (got = 0; got < (int)n; got++)
            objs[got] = v[got] >= 0 && v[got] <= INT_MAX ? (int)v[got] : -1;
    H5Sclose(sp), H5Tclose(t), H5Aclose(a);
    return got;
}

samc_status samc_dump_records(samc_dump *d, samc_dump_record **recs, int *n, samc_error *err)
{
    *recs = NULL;
    *n = 0;
    if (!samc_dump_exists(d, "/trace"))
        return samc_fail(err, SAMC_ERR_KEY, "%s: no /trace group", d->path);
    int cap = 0;
    for (int i = 0;; i++) {
        char g[32];
        snprintf(g, sizeof g, "/trace/%06d", i);
        if (!samc_dump_exists(d, g))
            break;
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            samc_dump_record *r = realloc(*recs, (size_t)cap * sizeof *r);
            if (!r)
                return free(*recs), *recs = NULL, samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            *recs = r;
        }
        samc_dump_record *r = &(*recs)[(*n)++];
        memset(r, 0, sizeof *r);
        r->index = i;
        char *mod = NULL;
        double call = 0, v = -1;
        samc_status st = samc_dump_attr_str(d, g, "module", &mod, err);
        if (!st)
            st = samc_dump_attr_num(d, g, "call", &call, NULL, err);
        if (st) {
            free(mod);
            free(*recs);
            *recs = NULL;
            return st;
        }
        snprintf(r->module, sizeof r->module, "%s", mod);
        free(mod);
        if (!(call >= 0 && call <= INT_MAX && call == (int)call)) { /* also NaN: no float->int overflow */
            free(*recs);
            *recs = NULL;
            return samc_fail(err, SAMC_ERR_FORMAT, "%s: attribute %s/call is %g, expected an integer >= 0", d->path, g,
                             call);
        }
        r->call = (int)call;
        r->frame_idx = r->obj_id = -1;
        if (samc_dump_has_attr(d, g, "frame_idx") && !samc_dump_attr_num(d, g, "frame_idx", &v, NULL, NULL) &&
            v >= -1 && v <= INT_MAX)
            r->frame_idx = (int)v;
        if (samc_dump_has_attr(d, g, "obj_ids"))
            r->n_objs = read_obj_ids(d, g, r->objs);
        if (samc_dump_has_attr(d, g, "obj_id") && !samc_dump_attr_num(d, g, "obj_id", &v, NULL, NULL) && v >= -1 &&
            v <= INT_MAX)
            r->obj_id = (int)v;
    }
    return SAMC_OK;
}

samc_status samc_dump_list(samc_dump *d, const char *group, char ***names, int *n, samc_error *err)
{
    *names = NULL;
    *n = 0;
    if (!samc_dump_exists(d, group))
        return SAMC_OK;
    hid_t g = H5Gopen2(d->file, group, H5P_DEFAULT);
    if (g < 0)
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: %s is not a group", d->path, group);
    H5G_info_t info;
    if (H5Gget_info(g, &info) < 0 || info.nlinks > (1u << 20)) {
        H5Gclose(g);
        return samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot list group %s (corrupt file?)", d->path, group);
    }
    *names = calloc(info.nlinks ? info.nlinks : 1, sizeof **names);
    for (hsize_t i = 0; *names && i < info.nlinks; i++) {
        char buf[256];
        ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, buf, sizeof buf, H5P_DEFAULT);
        if (len > 0 && len < (ssize_t)sizeof buf)
            (*names)[(*n)++] = strdup(buf);
    }
    H5Gclose(g);
    return *names ? SAMC_OK : samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
}

void samc_dump_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
