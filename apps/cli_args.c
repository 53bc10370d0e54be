/* SPDX-License-Identifier: Apache-2.0 */
/* cli_args.c - strict parsing of numeric command-line arguments. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"

#ifndef SAMC_DATA_DIR
#define SAMC_DATA_DIR "fixtures/demo"
#endif
#ifndef SAMC_INSTALLED_DATA_DIR
#define SAMC_INSTALLED_DATA_DIR SAMC_DATA_DIR
#endif
#include "core/base/error.h"
#include "core/base/tmpfile.h"

bool cli_parse_floats(const char *s, float *out, int n)
{
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || fabs(v) > 1e9)
            return false;
        out[i] = (float)v;
        if (i < n - 1) {
            if (*end != ',')
                return false;
            p = end + 1;
        } else if (*end != '\0') {
            return false;
        }
    }
    return true;
}

samc_status cli_parse_point(const char *s, float *xy, int32_t *label, samc_error *err)
{
    float v[3];
    const char *c1 = strchr(s, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (c2) {
        if (!cli_parse_floats(s, v, 3) || v[2] != floorf(v[2]))
            return samc_fail(err, SAMC_ERR_ARG, "--point '%s': expected X,Y[,LABEL] with finite numbers", s);
        if (v[2] < -1 || v[2] > 3)
            return samc_fail(err, SAMC_ERR_ARG, "--point '%s': label %g outside -1..3 (1 foreground, 0 background)", s, v[2]);
        *label = (int32_t)v[2];
    } else {
        if (!cli_parse_floats(s, v, 2))
            return samc_fail(err, SAMC_ERR_ARG, "--point '%s': expected X,Y[,LABEL] with finite numbers", s);
        *label = 1;
    }
    xy[0] = v[0], xy[1] = v[1];
    return SAMC_OK;
}

samc_status cli_parse_box(const char *s, float *box, samc_error *err)
{
    if (!cli_parse_floats(s, box, 4))
        return samc_fail(err, SAMC_ERR_ARG, "--box '%s': expected X0,Y0,X1,Y1 with finite numbers", s);
    if (box[2] < box[0] || box[3] < box[1])
        return samc_fail(err, SAMC_ERR_ARG, "--box '%s': x1 < x0 or y1 < y0", s);
    return SAMC_OK;
}

samc_status cli_parse_int(const char *flag, const char *s, int lo, int hi, int *out, samc_error *err)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return samc_fail(err, SAMC_ERR_ARG, "%s '%s': expected an integer in %d..%d", flag, s, lo, hi);
    *out = (int)v;
    return SAMC_OK;
}

samc_status cli_mkdirs(const char *dir, samc_error *err)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    if (mkdir(buf, 0755) && errno != EEXIST)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot create directory: %s", dir, strerror(errno));
    return SAMC_OK;
}

const char *cli_output_tmp(cli_outputs *o, const char *final, samc_error *err)
{
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 8;
        char **t = realloc(o->tmp, (size_t)cap * sizeof *t), **f = t ? realloc(o->final, (size_t)cap * sizeof *f) : NULL;
        if (t)
            o->tmp = t;
        if (!t || !f) {
            samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        o->final = f, o->cap = cap;
    }
    char *t = NULL, *f = strdup(final);
    if (!f) {
        samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (samc__tmp_create(final, &t, err)) { /* exclusive, registered for removal on a signal */
        free(f);
        return NULL;
    }
    o->tmp[o->n] = t, o->final[o->n] = f;
    o->n++;
    return t;
}

static void outputs_free(cli_outputs *o)
{
    for (int i = 0; i < o->n; i++)
        samc__tmp_discard(o->tmp[i]), free(o->final[i]); /* committed ones are NULL */
    free(o->tmp), free(o->final);
    memset(o, 0, sizeof *o);
}

samc_status cli_outputs_commit(cli_outputs *o, samc_error *err)
{
    samc_status st = SAMC_OK;
    /* A directory in the way is the one rename failure that can be seen
     * coming: check every name first, so the set is renamed whole or not. */
    struct stat sb;
    for (int i = 0; !st && i < o->n; i++)
        if (lstat(o->final[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            st = samc_fail(err, SAMC_ERR_IO, "%s: cannot write the output: a directory is in the way", o->final[i]);
    if (!st && o->stale_dir) /* an earlier run's outputs that this run does not replace */
        cli_remove_stale(o->stale_dir, o->stale, (const char *const *)o->final, o->n);
    for (int i = 0; !st && i < o->n; i++)
        st = samc__tmp_commit(&o->tmp[i], o->final[i], err);
    outputs_free(o); /* removes the temporaries left after a failure */
    return st;
}

void cli_outputs_discard(cli_outputs *o) { outputs_free(o); }

samc_status cli_write_bytes(const char *path, const void *data, size_t n, samc_error *err)
{
    FILE *f = NULL;
    samc_status st = samc__tmp_reopen(path, path, &f, err); /* never follows a link planted in its place */
    if (st)
        return st;
    const bool ok = fwrite(data, 1, n, f) == n;
    if (fclose(f) || !ok)
        return samc_fail(err, SAMC_ERR_IO, "%s: cannot write (disk full?)", path);
    return SAMC_OK;
}

/* The bundled demo (a tiny random-weight model and an image): in
 * $SAMC_DATA_DIR, else the source tree's fixtures/demo, else the installed copy. */
void cli_demo_paths(char *model, char *config, char *image, size_t n)
{
    const char *dir = getenv("SAMC_DATA_DIR");
    if (!dir)
        dir = access(SAMC_DATA_DIR "/tiny_d_demo.pt", R_OK) == 0 ? SAMC_DATA_DIR : SAMC_INSTALLED_DATA_DIR;
    snprintf(model, n, "%s/tiny_d_demo.pt", dir);
    snprintf(config, n, "%s/tiny_d_demo.config.json", dir);
    snprintf(image, n, "%s/demo.png", dir);
}
