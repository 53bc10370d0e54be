/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_cli_args.c - the command line's numeric and prompt parsing
 * (apps/cli_args.c: --point, --box, --threads/--max-hole-area numbers),
 * the prompt check the predictor applies to what was parsed
 * (samc_sam_check_prompt), and the --impl / --impl-override name parsing
 * (core/runtime/exec.c). The input is split into lines; every line goes
 * through every parser. Seeds: fuzz/seeds/cli_args/. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli.h"
#include "core/models/sam2/sam2_model.h"
#include "fuzz_common.h"

static samc_sam2_model model; /* only the fields the name and prompt checks read */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    static bool base_ready;
    if (!base_ready) { /* the lock and the prepared copies persist across inputs */
        samc_model_base_init(&model.base);
        base_ready = true;
    }
    model.image_encoder.depth = 12;
    model.tracker.mask_decoder.transformer.depth = 2;
    model.tracker.memory_encoder.n_fuser = 2;
    model.tracker.memory_attention.n_layers = 4;
    model.tracker.emb = 16;
    samc_exec x;
    if (samc_sam2_exec_init(&x, &model, NULL)) {
        free(buf);
        return 0;
    }

    float pts[2 * 64];
    int32_t labels[64];
    int np = 0;
    samc_sam_prompt pr = {0};
    char *line = buf;
    for (int li = 0; line && li < 64; li++) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        samc_error e = {0};
        float xy[2];
        int32_t lab = 99;
        samc_status st = cli_parse_point(line, xy, &lab, &e);
        fuzz_check_error(st, &e, NULL, "cli_parse_point");
        if (!st) {
            if (!isfinite(xy[0]) || !isfinite(xy[1]) || lab < -1 || lab > 3)
                abort();
            pts[2 * np] = xy[0], pts[2 * np + 1] = xy[1], labels[np++] = lab;
        }
        samc_error eb = {0};
        float box[4];
        st = cli_parse_box(line, box, &eb);
        fuzz_check_error(st, &eb, NULL, "cli_parse_box");
        if (!st) {
            for (int i = 0; i < 4; i++)
                if (!isfinite(box[i]))
                    abort();
            if (box[2] < box[0] || box[3] < box[1])
                abort();
            memcpy(pr.box, box, sizeof box);
            pr.has_box = true;
        }
        samc_error ei = {0};
        int v = 0;
        st = cli_parse_int("--threads", line, 1, 1024, &v, &ei);
        fuzz_check_error(st, &ei, "--threads", "cli_parse_int");
        if (!st && (v < 1 || v > 1024))
            abort();
        float f[4];
        for (int n = 1; n <= 4; n++)
            if (cli_parse_floats(line, f, n))
                for (int i = 0; i < n; i++)
                    if (!isfinite(f[i]))
                        abort();
        samc_error eo = {0};
        st = samc_exec_add_override(&x, line, &eo);
        fuzz_check_error(st, &eo, "--impl-override", "samc_exec_add_override");
        samc_error es = {0};
        st = samc_exec_set_impl(&x, line, &es);
        fuzz_check_error(st, &es, "--impl", "samc_exec_set_impl");
        if (!st && !x.impl)
            abort();
        (void)samc_exec_find(&x, line);
        line = nl ? nl + 1 : NULL;
    }
    samc_frame_features feat = {.orig_h = 48, .orig_w = 64};
    pr.n_points = np;
    pr.points = pts;
    pr.labels = labels;
    for (int outside = 0; outside < 2; outside++) {
        pr.allow_points_outside = outside;
        samc_error e = {0};
        samc_status st = samc_sam_check_prompt(&model.tracker, &feat, &pr, &e);
        fuzz_check_error(st, &e, NULL, "samc_sam_check_prompt");
        if (!st && !outside)
            for (int i = 0; i < np; i++)
                if (pts[2 * i] < 0 || pts[2 * i + 1] < 0 || pts[2 * i] > 64 || pts[2 * i + 1] > 48)
                    abort();
    }
    samc_exec_free(&x);
    free(buf);
    return 0;
}
