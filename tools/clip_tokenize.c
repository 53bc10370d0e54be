/* SPDX-License-Identifier: Apache-2.0 */
/* clip_tokenize.c - samc's SAM 3 tokenizer as a filter, for
 * tools/tokenizer_difftest.py: each input line is a text as hex of its UTF-8
 * bytes (Python's surrogatepass form); each output line is the 32 ids, or
 * "ERR <message>". Argument: the vocabulary path; optional second: the ftfy
 * version ("6.1.1" default, "6.3.1").
 *
 * Build (the tokenizer needs only libutf8proc and zlib):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I. -Iinclude -Icore tools/clip_tokenize.c \
 *      core/text/[a-z]*.c core/base/error.c core/base/fileio.c -lutf8proc -lz -o build/clip_tokenize
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "core/text/clip_tokenizer.h"

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s VOCAB.gz [FTFY_VERSION] < hex-lines\n", argv[0]);
        return 2;
    }
    samc_error err = {0};
    samc_clip_tokenizer *tok;
    if (samc_clip_tokenizer_load(argv[1], &tok, &err) ||
        (argc > 2 && samc_clip_tokenizer_set_ftfy(tok, argv[2], &err))) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, stdin)) > 0) {
        size_t n = (size_t)got / 2;
        unsigned char *b = malloc(n + 1);
        for (size_t i = 0; i < n; i++) /* not sscanf: it measures the whole line each call */
            b[i] = (unsigned char)(hexval(line[2 * i]) << 4 | hexval(line[2 * i + 1]));
        int64_t ids[SAMC_CLIP_CONTEXT_SAM3];
        samc_error_clear(&err);
        if (samc_clip_tokenizer_encode_n(tok, (const char *)b, n, SAMC_CLIP_CONTEXT_SAM3, ids, NULL, NULL, &err)) {
            printf("ERR %s\n", err.msg);
        } else {
            for (int i = 0; i < SAMC_CLIP_CONTEXT_SAM3; i++)
                printf(i ? " %lld" : "%lld", (long long)ids[i]);
            printf("\n");
        }
        free(b);
    }
    free(line);
    samc_clip_tokenizer_free(tok);
    return 0;
}
