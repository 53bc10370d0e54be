/* config_h5.c - the config of a parity dump (/model attribute config_json),
 * so a dump can serve as a checkpoint + config pair. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/config.h"
#include "core/base/error.h"
#include "core/base/fileio.h"

static char *read_config_attr(hid_t f)
{
    if (H5Lexists(f, "/model", H5P_DEFAULT) <= 0 || H5Aexists_by_name(f, "/model", "config_json", H5P_DEFAULT) <= 0)
        return NULL;
    hid_t a = H5Aopen_by_name(f, "/model", "config_json", H5P_DEFAULT, H5P_DEFAULT);
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

samc_status samc_sam2_config_from_h5(const char *path, samc_sam2_config *cfg, samc_error *err)
{
    samc_status rs = samc_check_regular(path, err); /* a FIFO would block HDF5's open */
    if (rs)
        return rs;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_file_locking(fapl, 0, 1); /* as the other readers, see parity/dump.c */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f < 0)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot open as HDF5 (missing, truncated or corrupt)", path);
    char *json = read_config_attr(f);
    H5Fclose(f);
    if (!json)
        return samc_fail(err, SAMC_ERR_KEY, "%s: no /model/config_json attribute holding one string", path);
    samc_status st = samc_sam2_config_from_json(json, path, cfg, err);
    free(json);
    return st;
}
