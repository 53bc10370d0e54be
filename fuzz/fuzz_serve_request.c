/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_serve_request.c - what `samc serve` reads from a request before any
 * model work: the URL path (apps/serve/serve_route.c) and the JSON bodies of
 * every route (apps/serve/serve_request.c, with the command line's prompt
 * checks). Input: one selector byte (which parser), then the path or body.
 * Invariants: a refusal has a message; an accepted prompt lies inside the
 * 320 x 240 image (points inside, boxes inside and ordered), its counts are
 * within the bounds, the video frame is inside the 5 frames; a matched
 * route's id is 32 lowercase hex digits. Seeds: fuzz/seeds/serve_request/. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "serve/serve.h"

enum { W = 320, H = 240, FRAMES = 5 };

static void check_points(const float *xy, int n)
{
    if (n < 0 || n > SERVE_MAX_POINTS)
        abort();
    for (int i = 0; i < n; i++)
        if (!(xy[2 * i] >= 0 && xy[2 * i] < W && xy[2 * i + 1] >= 0 && xy[2 * i + 1] < H))
            abort();
}

static void check_box(const float *b)
{
    if (!(b[0] >= 0 && b[1] >= 0 && b[2] <= W && b[3] <= H && b[2] >= b[0] && b[3] >= b[1]))
        abort();
}

static void route(const uint8_t *data, size_t size)
{
    char *path = malloc(size + 1);
    memcpy(path, data, size);
    path[size] = 0;
    const serve_route r = serve_route_match(path);
    if (r.id != R_NONE && r.id != R_PAGE && r.res_id[0]) {
        if (strlen(r.res_id) != SERVE_ID_LEN)
            abort();
        for (int i = 0; i < SERVE_ID_LEN; i++)
            if (!isxdigit((unsigned char)r.res_id[i]) || isupper((unsigned char)r.res_id[i]))
                abort();
    }
    if (r.id == R_PAGE && (strchr(r.file, '/') || r.file[0] == '.'))
        abort();
    free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *body = (const char *)data + 1;
    const size_t n = size - 1;
    samc_error e = {0};
    samc_status st = SAMC_OK;
    switch (data[0] % 6) {
    case 0: {
        serve_predict_req p;
        st = serve_parse_predict(body, n, H, W, &p, &e);
        if (!st) {
            check_points(p.points, p.n_points);
            if (p.has_box)
                check_box(p.box);
            if (!p.n_points && !p.has_box && p.mask_pred < 0)
                abort();
        }
        break;
    }
    case 1: {
        serve_text_req p;
        st = serve_parse_text(body, n, H, W, &p, &e);
        if (!st && (p.n_boxes < 0 || p.n_boxes > SERVE_MAX_BOXES || !(p.threshold >= 0 && p.threshold <= 1)))
            abort();
        for (int i = 0; !st && i < p.n_boxes; i++)
            check_box(p.boxes + 4 * i);
        break;
    }
    case 2: {
        samc_amg_params p;
        st = serve_parse_amg(body, n, &p, &e);
        if (!st && (p.points_per_side < 1 || p.points_per_side > 64 || p.crop_n_layers > 2))
            abort();
        break;
    }
    case 3: {
        serve_video_prompt_req p;
        st = serve_parse_video_prompt(body, n, FRAMES, H, W, &p, &e);
        if (!st) {
            if (p.frame < 0 || p.frame >= FRAMES || p.obj_id < 0)
                abort();
            check_points(p.points, p.n_points);
            if (p.has_box)
                check_box(p.box);
        }
        break;
    }
    case 4: {
        serve_propagate_req p;
        st = serve_parse_propagate(body, n, FRAMES, &p, &e);
        if (!st && (p.start >= FRAMES || p.max_frames > FRAMES))
            abort();
        break;
    }
    default:
        route((const uint8_t *)body, n);
        return 0;
    }
    fuzz_check_error(st, &e, NULL, "serve request");
    return 0;
}
