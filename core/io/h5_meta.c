/* SPDX-License-Identifier: Apache-2.0 */
/* h5_meta.c - parity dumps as checkpoints, through the reader the parity
 * harness installs (h5_meta.h): libsamc itself links no HDF5. */
#include "core/io/h5_meta.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"

static const samc_dump_reader *installed;

void samc_dump_reader_install(const samc_dump_reader *r) { installed = r; }

static samc_status no_reader(const char *path, samc_error *err)
{
    return samc_fail(err, SAMC_ERR_UNSUPPORTED, "%s: an HDF5 parity dump; this program reads checkpoints (.pt, "
                     ".safetensors) only: dumps are read by programs that link samc's parity harness (the samc "
                     "command, the tests)", path);
}

samc_status samc_h5_meta_read(const char *path, bool with_vocab, samc_h5_meta *out, samc_error *err)
{
    memset(out, 0, sizeof *out);
    return installed ? installed->read_meta(path, with_vocab, out, err) : no_reader(path, err);
}

samc_status samc_weights_open_h5(const char *path, samc_weights **out, samc_error *err)
{
    *out = NULL;
    return installed ? installed->open_weights(path, out, err) : no_reader(path, err);
}

void samc_h5_meta_free(samc_h5_meta *m)
{
    free(m->task);
    free(m->config_json);
    free(m->variant);
    free(m->code_constants_json);
    free(m->vocab_gz);
    memset(m, 0, sizeof *m);
}
