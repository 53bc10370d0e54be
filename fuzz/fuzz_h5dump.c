/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_h5dump.c - samc's reading of HDF5 parity dumps: parity/dump.c (open,
 * attributes, records, listing, the three dataset readers), the /weights
 * loader parity/dump_weights.c, the --config DUMP.h5 reader core/models/sam2/config_h5.c,
 * and samc_parity_run up to the point where the
 * model would be built (with these inputs the key check fails first).
 *
 * The HDF5 library itself is a Debian build without sanitizers or coverage:
 * only samc's code is instrumented, and crashes inside libhdf5 on corrupt
 * files are findings about HDF5 (docs/hostile_input.md), which samc can
 * only contain by treating dumps as trusted local artefacts. Seeds:
 * fuzz/seeds/h5dump/ (small dumps written with h5py by fuzz/make_seeds.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/config.h"
#include "core/io/weights.h"
#include "fuzz_common.h"
#include "parity/dump.h"
#include "parity/parity.h"

static int budget; /* datasets read per input */

static void read_all(samc_dump *d, const char *path)
{
    if (budget-- <= 0)
        return;
    samc_error e = {0};
    samc_tensor t = {0};
    samc_status st = samc_dump_read(d, path, &t, &e);
    fuzz_check_error(st, &e, NULL, "samc_dump_read");
    if (!st)
        fuzz_touch(t.data, (size_t)samc_numel(&t));
    samc_tensor_release(&t);

    samc_error e2 = {0};
    uint8_t *u8 = NULL;
    int nd = 0;
    int64_t dims[4] = {0};
    st = samc_dump_read_u8(d, path, &u8, &nd, dims, &e2);
    fuzz_check_error(st, &e2, NULL, "samc_dump_read_u8");
    if (!st) {
        fuzz_touch_bytes(u8, (size_t)samc_shape_numel(nd, dims));
    }
    free(u8);

    samc_error e3 = {0};
    int32_t *i32 = NULL;
    int64_t n = 0;
    st = samc_dump_read_i32(d, path, &i32, &n, &e3);
    fuzz_check_error(st, &e3, NULL, "samc_dump_read_i32");
    if (!st)
        fuzz_touch_bytes(i32, (size_t)n * sizeof *i32);
    free(i32);
}

/* Every dataset under `group`, one level of subgroups deep. */
static void walk_group(samc_dump *d, const char *group, int depth)
{
    char **names = NULL;
    int n = 0;
    samc_error e = {0};
    samc_status st = samc_dump_list(d, group, &names, &n, &e);
    fuzz_check_error(st, &e, NULL, "samc_dump_list");
    for (int i = 0; i < n && budget > 0; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", group, names[i]);
        read_all(d, p);
        if (depth < 2)
            walk_group(d, p, depth + 1);
    }
    samc_dump_free_names(names, n);
}

static void attr_str(samc_dump *d, const char *obj, const char *name, bool parse_config)
{
    samc_error e = {0};
    char *s = NULL;
    samc_status st = samc_dump_attr_str(d, obj, name, &s, &e);
    fuzz_check_error(st, &e, NULL, "samc_dump_attr_str");
    if (!st) {
        (void)strlen(s);
        if (parse_config) {
            samc_sam2_config cfg;
            samc_error ce = {0};
            fuzz_check_error(samc_sam2_config_from_json(s, "config_json", &cfg, &ce), &ce, NULL,
                             "samc_sam2_config_from_json");
        }
    }
    free(s);
}

static void attr_num(samc_dump *d, const char *obj, const char *name)
{
    samc_error e = {0};
    double v = 0;
    bool none = false;
    fuzz_check_error(samc_dump_attr_num(d, obj, name, &v, &none, &e), &e, NULL, "samc_dump_attr_num");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_temp_file(data, size, ".h5");
    samc_error err = {0};
    samc_dump *d = NULL;
    samc_status st = samc_dump_open(path, &d, &err);
    fuzz_check_error(st, &err, path, "samc_dump_open");
    if (!st) {
        budget = 64;
        attr_str(d, "/model", "family", false);
        attr_str(d, "/model", "config_json", true);
        attr_str(d, "/inputs", "task", false);
        attr_num(d, "/inputs", "max_hole_area");
        attr_num(d, "/inputs/prompts/0", "multimask_output");
        samc_dump_record *recs = NULL;
        int nrec = 0;
        samc_error re = {0};
        st = samc_dump_records(d, &recs, &nrec, &re);
        fuzz_check_error(st, &re, NULL, "samc_dump_records");
        for (int i = 0; !st && i < nrec && i < 16; i++) {
            char g[64];
            snprintf(g, sizeof g, "/trace/%06d/out", recs[i].index);
            walk_group(d, g, 2);
            snprintf(g, sizeof g, "/trace/%06d/in", recs[i].index);
            walk_group(d, g, 1);
        }
        free(recs);
        walk_group(d, "/inputs", 0);
        walk_group(d, "/outputs", 1);
        samc_dump_close(d);
    }
    samc_error we = {0};
    samc_weights *w = NULL;
    st = samc_weights_open_h5(path, &w, &we);
    fuzz_check_error(st, &we, path, "samc_weights_open_h5");
    if (!st)
        for (size_t i = 0; i < samc_weights_count(w); i++)
            fuzz_touch(samc_weights_at(w, i)->data, (size_t)samc_numel(samc_weights_at(w, i)));
    samc_weights_free(w);

    samc_sam2_config cfg; /* --config DUMP.h5 */
    samc_error ce = {0};
    fuzz_check_error(samc_sam2_config_from_h5(path, &cfg, &ce), &ce, path, "samc_sam2_config_from_h5");

    samc_parity_opts o = {.impl = "ref"};
    samc_parity_report rep;
    samc_error pe = {0};
    st = samc_parity_run(path, &o, &rep, &pe);
    fuzz_check_error(st, &pe, NULL, "samc_parity_run");
    if (!st)
        samc_parity_report_free(&rep);
    return 0;
}
