/* SPDX-License-Identifier: Apache-2.0 */
/* replay_main.c - run saved inputs through a harness without libFuzzer.
 *
 *   replay_<name> FILE_OR_DIR ...
 *
 * Every regular file (directories: their entries, sorted) is passed once to
 * LLVMFuzzerTestOneInput. Used by CTest to replay tests/fuzz_regress/ in the
 * normal and sanitizer builds: a fixed bug that comes back crashes here. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int n_run;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (n == cap)
            buf = realloc(buf, cap *= 2);
        if (!buf)
            exit(3);
        size_t r = fread(buf + n, 1, cap - n, f);
        if (!r)
            break;
        n += r;
    }
    fclose(f);
    /* an exactly sized copy, so ASan sees any read past the input */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    printf("replay %s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    n_run++;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb)) {
        perror(path);
        exit(2);
    }
    if (!S_ISDIR(sb.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        exit(2);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap)
            names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, names[i]);
        run_path(p);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR ...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        run_path(argv[i]);
    printf("%d input(s) replayed without a crash\n", n_run);
    return 0;
}
