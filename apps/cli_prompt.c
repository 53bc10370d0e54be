/* SPDX-License-Identifier: Apache-2.0 */
/* cli_prompt.c - the one prompt check of `samc segment` and `samc track`:
 * what the official predictors would silently accept (a point far outside
 * the frame, a box beyond it) is most likely a typo on the command line. */
#include <math.h>

#include "cli.h"
#include "core/base/error.h"

samc_status cli_check_points(const char *where, const float *xy, int n, int w, int h, samc_error *err)
{
    for (int i = 0; i < n; i++) {
        const float x = xy[2 * i], y = xy[2 * i + 1];
        if (!isfinite(x) || !isfinite(y))
            return samc_fail(err, SAMC_ERR_ARG, "%s: point (%g, %g) is not finite", where, x, y);
        if (x < 0 || y < 0 || x >= (float)w || y >= (float)h)
            return samc_fail(err, SAMC_ERR_ARG, "%s: point %d (%g,%g) is outside the %dx%d image (0 <= x < %d, 0 <= y < %d)",
                             where, i, x, y, w, h, w, h);
    }
    return SAMC_OK;
}

samc_status cli_check_box(const char *where, const float *b, int w, int h, samc_error *err)
{
    for (int i = 0; i < 4; i++)
        if (!isfinite(b[i]))
            return samc_fail(err, SAMC_ERR_ARG, "%s: box coordinates must be finite", where);
    if (b[2] < b[0] || b[3] < b[1])
        return samc_fail(err, SAMC_ERR_ARG, "%s: box (%g,%g,%g,%g) has x1 < x0 or y1 < y0", where, b[0], b[1], b[2], b[3]);
    if (b[0] < 0 || b[1] < 0 || b[2] > (float)w || b[3] > (float)h)
        return samc_fail(err, SAMC_ERR_ARG, "%s: box (%g,%g,%g,%g) is outside the %dx%d image (0..%d, 0..%d)", where,
                         b[0], b[1], b[2], b[3], w, h, w, h);
    return SAMC_OK;
}

samc_status cli_check_exemplar_box(const char *where, const float *b, int w, int h, samc_error *err)
{
    samc_status st = cli_check_box(where, b, w, h, err);
    if (!st && (!(b[2] > b[0]) || !(b[3] > b[1])))
        st = samc_fail(err, SAMC_ERR_ARG, "%s: box (%g,%g,%g,%g) has zero width or height", where, b[0], b[1], b[2],
                       b[3]);
    return st;
}

void cli_box_cxcywh(const float *b, int w, int h, float out[4])
{
    out[0] = (b[0] + b[2]) * 0.5f / (float)w, out[1] = (b[1] + b[3]) * 0.5f / (float)h;
    out[2] = (b[2] - b[0]) / (float)w, out[3] = (b[3] - b[1]) / (float)h;
}
