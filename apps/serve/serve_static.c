/* SPDX-License-Identifier: Apache-2.0 */
/* serve_static.c - the web page (serve.h): the files of web/, embedded in
 * the binary at build time (cmake/embed_files.cmake writes web_assets.c),
 * so an installed samc serves its page with no files to find and no path
 * taken from a request. */
#include <string.h>

#include "serve_http.h"

typedef struct serve_asset {
    const char *name, *type;
    const unsigned char *data;
    size_t size;
} serve_asset;

extern const serve_asset serve_assets[];
extern const int serve_n_assets;

void serve_on_page(serve_req *rq)
{
    for (int i = 0; i < serve_n_assets; i++)
        if (!strcmp(serve_assets[i].name, rq->route.file)) {
            serve_reply_bytes(rq, 200, serve_assets[i].type, (void *)serve_assets[i].data, serve_assets[i].size, NULL);
            return;
        }
    serve_reply_error(rq, 404, "no such file of the page: %s", rq->route.file);
}
