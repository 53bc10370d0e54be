/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_frames_dir.c - the video frames-directory reader
 * (core/io/video_frames.c: samc_frames_open_dir, samc_frames_get, with
 * core/io/jpeg_decode.c underneath). The input describes a directory:
 *   repeated: u8 k, k bytes file name, u32 LE n, n bytes content
 * Names are made safe for one directory level ('/' and NUL become '_',
 * "." and ".." are skipped); at most 16 files. The directory is recreated
 * for every input. Seeds: fuzz/seeds/frames_dir/ (fuzz/make_seeds.py). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/video_frames.h"
#include "fuzz_common.h"

static char dir[256];

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/samc_fuzz_frames_%d", base, (int)getpid());
        atexit(remove_dir);
    }
    remove_dir();
    if (mkdir(dir, 0700))
        abort();
    size_t pos = 0;
    for (int files = 0; pos < size && files < 16; files++) {
        size_t k = data[pos++];
        if (k > size - pos)
            break;
        char name[256];
        memcpy(name, data + pos, k);
        name[k] = '\0';
        pos += k;
        for (size_t i = 0; i < k; i++)
            if (name[i] == '/' || name[i] == '\0')
                name[i] = '_';
        if (size - pos < 4)
            break;
        size_t n = (size_t)data[pos] | (size_t)data[pos + 1] << 8 | (size_t)data[pos + 2] << 16 |
                   (size_t)data[pos + 3] << 24;
        pos += 4;
        if (n > size - pos)
            n = size - pos;
        if (k == 0 || !strcmp(name, ".") || !strcmp(name, "..")) {
            pos += n;
            continue;
        }
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            if (n && write(fd, data + pos, n) != (ssize_t)n)
                abort();
            close(fd);
        }
        pos += n;
    }
    samc_frames *f = NULL;
    samc_error err = {0};
    samc_status st = samc_frames_open_dir(dir, &f, &err);
    fuzz_check_error(st, &err, dir, "samc_frames_open_dir");
    if (!st) {
        const int T = samc_frames_count(f), H = samc_frames_height(f), W = samc_frames_width(f);
        if (T <= 0 || H <= 0 || W <= 0)
            abort();
        for (int t = 0; t < T && t < 4; t++) {
            const uint8_t *rgb = NULL;
            samc_error ge = {0};
            samc_status gs = samc_frames_get(f, t, &rgb, &ge);
            fuzz_check_error(gs, &ge, dir, "samc_frames_get");
            if (!gs)
                fuzz_touch_bytes(rgb, (size_t)H * W * 3);
        }
    }
    samc_frames_free(f);
    return 0;
}
