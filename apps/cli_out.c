/* SPDX-License-Identifier: Apache-2.0 */
/* cli_out.c - output files: the --out directory checked before inference,
 * atomic writes (temporary + rename) whose errors name the user's path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/base/error.h"
#include "core/base/tmpfile.h"
#include "core/io/image_io.h"

int cli_verbosity = 1;

int cli_exit_code(samc_status st)
{
    return st == SAMC_OK ? CLI_EXIT_OK : st == SAMC_ERR_ARG ? CLI_EXIT_USAGE : CLI_EXIT_RUNTIME;
}

samc_status cli_prepare_out_dir(const char *dir, samc_error *err)
{
    /* refused before anything is created: a path the system cannot take
     * (mkdir -p made 20 levels of directories before failing) */
    samc_status ps = samc__path_fits(dir, CLI_OUT_NAME_ROOM, "--out", err);
    if (ps)
        return ps;
    struct stat sb;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return samc_fail(err, SAMC_ERR_IO, "--out %s: not a directory: %s", dir, strerror(ENOTDIR));
    samc_error me = {0};
    if (cli_mkdirs(dir, &me))
        return samc_fail(err, SAMC_ERR_IO, "--out %s", me.msg);
    if (access(dir, W_OK | X_OK))
        return samc_fail(err, SAMC_ERR_IO, "--out %s: cannot write into the directory: %s", dir, strerror(errno));
    return SAMC_OK;
}

static samc_status write_raw(const char *tmp, const char *final, const void *data, size_t n, samc_error *err)
{
    FILE *f = NULL;
    samc_status st = samc__tmp_reopen(tmp, final, &f, err);
    if (st)
        return st;
    int e = 0;
    if (fwrite(data, 1, n, f) != n)
        e = errno ? errno : EIO;
    if (fclose(f) && !e)
        e = errno ? errno : EIO;
    return e ? samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", final, strerror(e)) : SAMC_OK;
}

static samc_status write_png(const char *tmp, const char *final, int w, int h, int comp, const uint8_t *data,
                             samc_error *err)
{
    return samc__png_write_into(tmp, final, w, h, comp, data, err);
}

samc_status cli_write_file_atomic(const char *final, const void *data, size_t n, samc_error *err)
{
    char *tmp = NULL;
    samc_status st = samc__tmp_create(final, &tmp, err);
    if (!st && !(st = write_raw(tmp, final, data, n, err)))
        st = samc__tmp_commit(&tmp, final, err);
    samc__tmp_discard(tmp);
    return st;
}

samc_status cli_write_png_atomic(const char *final, int w, int h, int comp, const uint8_t *data, samc_error *err)
{
    char *tmp = NULL;
    samc_status st = samc__tmp_create(final, &tmp, err);
    if (!st && !(st = write_png(tmp, final, w, h, comp, data, err)))
        st = samc__tmp_commit(&tmp, final, err);
    samc__tmp_discard(tmp);
    return st;
}

samc_status cli_outputs_bytes(cli_outputs *o, const char *final, const void *data, size_t n, samc_error *err)
{
    const char *tmp = cli_output_tmp(o, final, err);
    return tmp ? write_raw(tmp, final, data, n, err) : SAMC_ERR_NOMEM;
}

samc_status cli_outputs_png(cli_outputs *o, const char *final, int w, int h, int comp, const uint8_t *data,
                            samc_error *err)
{
    const char *tmp = cli_output_tmp(o, final, err);
    return tmp ? write_png(tmp, final, w, h, comp, data, err) : SAMC_ERR_NOMEM;
}
