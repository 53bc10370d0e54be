/* SPDX-License-Identifier: Apache-2.0 */
/* dump_meta.c - a parity dump's task, config and vocabulary, read with
 * HDF5 for core/io/h5_meta.h (samc_h5_meta_read forwards here once the
 * parity harness has installed its reader, dump_install.c). */
#include "core/io/h5_meta.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/fileio.h"
#include "parity/dump_reader.h"
#include "parity/h5_guard.h"

/* One variable-length string attribute `name` of object `obj`, or NULL. */
static char *attr_string(hid_t f, const char *obj, const char *name)
{
    if (H5Lexists(f, obj, H5P_DEFAULT) <= 0 || H5Aexists_by_name(f, obj, name, H5P_DEFAULT) <= 0)
        return NULL;
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    /* H5Aread writes every element of the dataspace: exactly one string fits `s` */
    const hssize_t npoints = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (sp >= 0)
        H5Sclose(sp);
    char *out = NULL;
    if (t >= 0 && npoints == 1 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(t));
        char *s = NULL;
        if (H5Aread(a, mt, &s) >= 0 && s) {
            out = strdup(s);
            H5free_memory(s);
        }
        H5Tclose(mt);
    }
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return out;
}

/* /model/bpe_vocab_gz: 1-D bytes. */
static samc_status read_vocab(hid_t f, const char *path, samc_h5_meta *m, samc_error *err)
{
    static const char name[] = "/model/bpe_vocab_gz";
    if (H5Lexists(f, "/model", H5P_DEFAULT) <= 0 || H5Lexists(f, name, H5P_DEFAULT) <= 0)
        return SAMC_OK;
    samc_status st = SAMC_OK;
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
    hsize_t n = 0;
    const char *why = NULL;
    if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 || H5Sget_simple_extent_dims(sp, &n, NULL) != 1 || n < 1)
        st = samc_fail(err, SAMC_ERR_SHAPE, "%s: %s must be 1-D bytes", path, name);
    else if ((why = samc_h5_dataset_problem(ds, (int64_t)n, 1)))
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: %s: %s", path, name, why);
    else if (!(m->vocab_gz = malloc((size_t)n)))
        st = samc_fail(err, SAMC_ERR_NOMEM, "%s: out of memory", path);
    else if (H5Dread(ds, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, m->vocab_gz) < 0)
        st = samc_fail(err, SAMC_ERR_FORMAT, "%s: cannot read %s as bytes", path, name);
    else
        m->vocab_n = (size_t)n;
    if (sp >= 0)
        H5Sclose(sp);
    if (ds >= 0)
        H5Dclose(ds);
    return st;
}

samc_status samc__dump_read_meta(const char *path, bool with_vocab, samc_h5_meta *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    samc_status st = samc_check_regular(path, err); /* a FIFO would block HDF5's open */
    if (st)
        return st;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_file_locking(fapl, 0, 1); /* as the other readers, see parity/dump.c */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f < 0)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open as HDF5 (missing, truncated or corrupt)", path);
    out->task = attr_string(f, "/inputs", "task");
    out->config_json = attr_string(f, "/model", "config_json");
    out->variant = attr_string(f, "/model", "variant");
    out->code_constants_json = attr_string(f, "/model", "code_constants_json");
    if (with_vocab)
        st = read_vocab(f, path, out, err);
    H5Fclose(f);
    if (st)
        samc_h5_meta_free(out);
    return st;
}
