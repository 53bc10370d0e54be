/* SPDX-License-Identifier: Apache-2.0 */
/* serve_route.c - URL paths to routes (serve.h). Pure string work on what a
 * client sent: fuzzed (fuzz/fuzz_serve_request.c). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

typedef struct route_row {
    serve_route_id id;
    const char *pattern;           /* "{id}": 32 hex digits, "{n}": a frame number */
    const char *methods, *name;
} route_row;

static const route_row rows[] = {
    {R_HEALTH, "/health", "GET", "health"},
    {R_METRICS, "/metrics", "GET", "metrics"},
    {R_MODELS, "/v1/models", "GET", "models"},
    {R_IMAGES, "/v1/images", "POST", "upload_image"},
    {R_IMAGE, "/v1/images/{id}", "GET, DELETE", "image"},
    {R_PREDICT, "/v1/images/{id}/predict", "POST", "predict"},
    {R_TEXT, "/v1/images/{id}/concepts", "POST", "concepts"},
    {R_AMG, "/v1/images/{id}/everything", "POST", "everything"},
    {R_VIDEOS, "/v1/videos", "POST", "upload_video"},
    {R_VIDEO, "/v1/videos/{id}", "GET, DELETE", "video"},
    {R_VIDEO_FRAME, "/v1/videos/{id}/frames/{n}", "GET", "video_frame"},
    {R_VIDEO_MASKS, "/v1/videos/{id}/masks/{n}", "GET", "video_masks"},
    {R_VIDEO_PROMPT, "/v1/videos/{id}/prompts", "POST", "video_prompt"},
    {R_VIDEO_PROPAGATE, "/v1/videos/{id}/propagate", "POST", "video_propagate"},
    {R_VIDEO_RESET, "/v1/videos/{id}/reset", "POST", "video_reset"},
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };

/* The page's files: "/" is index.html; names are plain (no "/" or ".."). */
static bool page_file(const char *path, const char **file)
{
    if (!strcmp(path, "/")) {
        *file = "index.html";
        return true;
    }
    if (strncmp(path, "/web/", 5))
        return false;
    const char *f = path + 5;
    if (!*f || strlen(f) > 64)
        return false;
    for (const char *c = f; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    if (f[0] == '.')
        return false;
    *file = f;
    return true;
}

/* One segment against "{id}", "{n}" or a literal; `end` is where the
 * segment of `path` stops. */
static bool match_segment(const char *pat, size_t plen, const char *seg, size_t slen, serve_route *r)
{
    if (plen == 4 && !memcmp(pat, "{id}", 4)) {
        if (slen != SERVE_ID_LEN)
            return false;
        for (size_t i = 0; i < slen; i++)
            if (!isxdigit((unsigned char)seg[i]) || isupper((unsigned char)seg[i]))
                return false;
        memcpy(r->res_id, seg, slen);
        r->res_id[slen] = 0;
        return true;
    }
    if (plen == 3 && !memcmp(pat, "{n}", 3)) {
        if (slen == 0 || slen > 9)
            return false;
        int v = 0;
        for (size_t i = 0; i < slen; i++) {
            if (!isdigit((unsigned char)seg[i]))
                return false;
            v = v * 10 + (seg[i] - '0');
        }
        r->frame = v;
        return true;
    }
    return plen == slen && !memcmp(pat, seg, slen);
}

static bool match(const char *pattern, const char *path, serve_route *r)
{
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p != '/' || *s != '/')
            return false;
        p++, s++;
        const char *pe = strchr(p, '/'), *se = strchr(s, '/');
        const size_t plen = pe ? (size_t)(pe - p) : strlen(p), slen = se ? (size_t)(se - s) : strlen(s);
        if (!match_segment(p, plen, s, slen, r))
            return false;
        p += plen, s += slen;
    }
    return !*p && !*s;
}

serve_route serve_route_match(const char *path)
{
    serve_route r = {.id = R_NONE, .frame = -1};
    if (!path || strlen(path) > 256)
        return r;
    if (page_file(path, &r.file)) {
        r.id = R_PAGE;
        return r;
    }
    for (int i = 0; i < N_ROWS; i++) {
        serve_route c = {.id = R_NONE, .frame = -1};
        if (match(rows[i].pattern, path, &c)) {
            c.id = rows[i].id;
            return c;
        }
    }
    return r;
}

const char *serve_route_methods(serve_route_id id)
{
    if (id == R_PAGE)
        return "GET";
    for (int i = 0; i < N_ROWS; i++)
        if (rows[i].id == id)
            return rows[i].methods;
    return "";
}

const char *serve_route_name(serve_route_id id)
{
    if (id == R_PAGE)
        return "page";
    for (int i = 0; i < N_ROWS; i++)
        if (rows[i].id == id)
            return rows[i].name;
    return "unknown";
}
