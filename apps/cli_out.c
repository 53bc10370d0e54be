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
#include "core/io/image_io.h"

int cli_verbosity = 1;

int cli_exit_code(samc_status st)
{
    return st == SAMC_OK ? CLI_EXIT_OK : st == SAMC_ERR_ARG ? CLI_EXIT_USAGE : CLI_EXIT_RUNTIME;
}

samc_status cli_prepare_out_dir(const char *dir, samc_error *err)
{
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

/* "DIR/.NAME.tmpPID" for "DIR/NAME". */
static char *tmp_name(const char *final)
{
    const char *slash = strrchr(final, '/');
    const size_t dlen = slash ? (size_t)(slash - final + 1) : 0, len = strlen(final) + 32;
    char *t = malloc(len);
    if (t)
        snprintf(t, len, "%.*s.%s.tmp%d", (int)dlen, final, final + dlen, (int)getpid());
    return t;
}

static samc_status write_raw(const char *tmp, const char *final, const void *data, size_t n, samc_error *err)
{
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", final, strerror(errno));
    int e = 0;
    if (fwrite(data, 1, n, f) != n)
        e = errno ? errno : EIO;
    if (fclose(f) && !e)
        e = errno ? errno : EIO;
    if (e) {
        remove(tmp);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write: %s", final, strerror(e));
    }
    return SAMC_OK;
}

static samc_status write_png(const char *tmp, const char *final, int w, int h, int comp, const uint8_t *data,
                             samc_error *err)
{
    samc_error pe = {0};
    errno = 0;
    if (!samc_png_write(tmp, w, h, comp, data, &pe))
        return SAMC_OK;
    const int e = errno;
    remove(tmp);
    return samc_fail(err, SAMC_ERR_IO, "%s: cannot write the PNG: %s", final, e ? strerror(e) : pe.msg);
}

static samc_status rename_into_place(const char *tmp, const char *final, samc_error *err)
{
    struct stat sb;
    if (lstat(final, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        remove(tmp);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write the output: a directory is in the way", final);
    }
    if (rename(tmp, final)) {
        const int e = errno;
        remove(tmp);
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot move the finished file into place: %s", final, strerror(e));
    }
    return SAMC_OK;
}

samc_status cli_write_file_atomic(const char *final, const void *data, size_t n, samc_error *err)
{
    char *tmp = tmp_name(final);
    samc_status st = !tmp ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : write_raw(tmp, final, data, n, err);
    if (!st)
        st = rename_into_place(tmp, final, err);
    free(tmp);
    return st;
}

samc_status cli_write_png_atomic(const char *final, int w, int h, int comp, const uint8_t *data, samc_error *err)
{
    char *tmp = tmp_name(final);
    samc_status st = !tmp ? samc_fail(err, SAMC_ERR_NOMEM, "out of memory") : write_png(tmp, final, w, h, comp, data, err);
    if (!st)
        st = rename_into_place(tmp, final, err);
    free(tmp);
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
