/* cli_args.c - strict parsing of numeric command-line arguments. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/error.h"

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
