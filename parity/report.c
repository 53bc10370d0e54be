/* SPDX-License-Identifier: Apache-2.0 */
/* report.c - the parity table, the bisection verdict and the JSON report. */
#include <cjson/cJSON.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/base/error.h"
#include "core/base/tmpfile.h"
#include "parity.h"

static const char *state_name(samc_parity_state s)
{
    switch (s) {
    case SAMC_PARITY_PASS: return "pass";
    case SAMC_PARITY_FAIL: return "FAIL";
    case SAMC_PARITY_SHAPE: return "SHAPE";
    case SAMC_PARITY_NOT_PRODUCED: return "NOT-PRODUCED";
    case SAMC_PARITY_NOT_IN_DUMP: return "NOT-IN-DUMP";
    case SAMC_PARITY_ERROR: return "ERROR";
    case SAMC_PARITY_FLIP: return "FLIP";
    }
    return "?";
}

static void row_label(const samc_parity_row *r, char *buf, size_t n)
{
    if (r->index >= INT_MAX - 1)
        snprintf(buf, n, "%s", r->module);
    else
        snprintf(buf, n, "%s#%d", r->module, r->call);
}

void samc_parity_print(const samc_parity_report *rep, FILE *f)
{
    fprintf(f, "parity: %s  impl=%s  mode=%s  tol=%g\n", rep->dump_path, rep->impl,
            rep->isolated ? "isolated" : "chained", rep->tol);
    fprintf(f, "%-6s %-46s %-22s %-20s %10s %10s %10s  %s\n", "order", "module#call", "slot", "shape", "max_abs",
            "rel", "nmse", "result");
    double worst = 0, worst_iou = 2;
    for (int i = 0; i < rep->n_rows; i++) {
        const samc_parity_row *r = &rep->rows[i];
        char lab[200], shape[96], order[16];
        if (!isnan(r->mask_iou) && r->mask_iou < worst_iou)
            worst_iou = r->mask_iou;
        row_label(r, lab, sizeof lab);
        samc_shape_str(r->ndim, r->shape, shape, sizeof shape);
        if (r->index >= INT_MAX - 1)
            snprintf(order, sizeof order, "%s", r->index == INT_MAX ? "final" : "extra");
        else
            snprintf(order, sizeof order, "%d", r->index);
        if (r->state == SAMC_PARITY_PASS || r->state == SAMC_PARITY_FAIL) {
            fprintf(f, "%-6s %-46s %-22s %-20s %10.3e %10.3e %10.3e  %s%s%s\n", order, lab, r->slot, shape, r->max_abs,
                    r->rel, r->nmse, state_name(r->state), r->note[0] ? ": " : "", r->note);
            worst = r->rel > worst ? r->rel : worst;
        } else if (r->state == SAMC_PARITY_FLIP) {
            fprintf(f, "%-6s %-46s %-22s %-20s %10s margin %.3e %10s  FLIP: %s\n", order, lab, "decision", "", "", r->rel,
                    "", r->note);
        } else {
            fprintf(f, "%-6s %-46s %-22s %-20s %32s  %s: %s\n", order, lab, r->slot, shape, "", state_name(r->state),
                    r->note);
        }
    }
    if (rep->n_ignored_records)
        fprintf(f, "(%d dump records of modules that are not parity points were ignored)\n", rep->n_ignored_records);
    if (rep->n_chained_only)
        fprintf(f, "(%d records of composites compared in chained runs only; their children ran alone)\n",
                rep->n_chained_only);
    fprintf(f, "worst rel: %.3e\n", worst);
    int propagated = 0;
    for (int i = 0; i < rep->n_rows; i++)
        propagated += rep->rows[i].state == SAMC_PARITY_PASS && rep->rows[i].rel > rep->tol;
    if (propagated)
        fprintf(f, "(%d row(s) over the tolerance pass as propagated error: their inputs' chained error, amplified "
                   "as measured (kappa, in the notes); each passes alone)\n", propagated);
    if (worst_iou <= 1)
        fprintf(f, "lowest mask IoU of the final masks (logit > 0): %.6f\n", worst_iou);
    if (rep->first_fail >= 0) {
        const samc_parity_row *r = &rep->rows[rep->first_fail];
        char lab[200];
        row_label(r, lab, sizeof lab);
        fprintf(f, "first failure (bisection): %s slot %s: %s%s%s\n", lab, r->slot, state_name(r->state),
                r->note[0] ? " - " : "", r->note);
        if (!rep->isolated)
            fprintf(f, "  (chained errors accumulate: rerun with --isolated to see which layer is at fault)\n");
    }
    if (rep->n_flips)
        fprintf(f, "(%lld value(s) re-synchronised at decision points within tolerance: the FLIP rows; --strict "
                   "turns this off)\n", (long long)rep->n_flip_values);
    fprintf(f, "%d passed, %d failed, %d flips\n", rep->n_pass, rep->n_fail, rep->n_flips);
}

samc_status samc_parity_write_json(const samc_parity_report *rep, const char *path, samc_error *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "dump", rep->dump_path);
    cJSON_AddStringToObject(root, "impl", rep->impl);
    cJSON_AddStringToObject(root, "mode", rep->isolated ? "isolated" : "chained");
    cJSON_AddNumberToObject(root, "tol", rep->tol);
    cJSON_AddNumberToObject(root, "passed", rep->n_pass);
    cJSON_AddNumberToObject(root, "failed", rep->n_fail);
    cJSON_AddNumberToObject(root, "flips", rep->n_flips);
    cJSON_AddNumberToObject(root, "flip_values", (double)rep->n_flip_values);
    cJSON *rows = cJSON_AddArrayToObject(root, "points");
    double worst = 0;
    for (int i = 0; i < rep->n_rows; i++) {
        const samc_parity_row *r = &rep->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "order", r->index >= INT_MAX - 1 ? -1 : r->index);
        cJSON_AddStringToObject(o, "module", r->module);
        cJSON_AddNumberToObject(o, "call", r->call);
        cJSON_AddStringToObject(o, "slot", r->slot);
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int k = 0; k < r->ndim; k++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)r->shape[k]));
        if (r->state == SAMC_PARITY_PASS || r->state == SAMC_PARITY_FAIL) {
            cJSON_AddNumberToObject(o, "max_abs", r->max_abs);
            cJSON_AddNumberToObject(o, "rel", r->rel);
            cJSON_AddNumberToObject(o, "nmse", r->nmse);
            if (r->judged) { /* rel = max_abs / scale (docs/parity.md, "The criterion") */
                cJSON_AddNumberToObject(o, "scale", r->scale);
                cJSON_AddNumberToObject(o, "ref_max", r->ref_max);
            }
            if (!isnan(r->kappa))
                cJSON_AddNumberToObject(o, "kappa", r->kappa);
            if (!isnan(r->mask_iou))
                cJSON_AddNumberToObject(o, "mask_iou", r->mask_iou);
            worst = r->rel > worst ? r->rel : worst;
        }
        cJSON_AddStringToObject(o, "result", state_name(r->state));
        if (r->digest) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->digest);
            cJSON_AddStringToObject(o, "digest", hex);
        }
        if (r->note[0])
            cJSON_AddStringToObject(o, "note", r->note);
        cJSON_AddItemToArray(rows, o);
    }
    cJSON_AddNumberToObject(root, "worst_rel", worst);
    if (rep->first_fail >= 0) {
        char lab[200];
        row_label(&rep->rows[rep->first_fail], lab, sizeof lab);
        cJSON_AddStringToObject(root, "first_failure", lab);
    } else {
        cJSON_AddNullToObject(root, "first_failure");
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory writing the JSON report");
    /* written whole under an exclusive temporary, then renamed */
    char *tmp = NULL;
    FILE *f = NULL;
    samc_status st = samc__tmp_create(path, &tmp, err);
    if (!st)
        st = samc__tmp_reopen(tmp, path, &f, err);
    if (!st) {
        bool ok = fputs(text, f) >= 0;
        if (fclose(f) != 0 || !ok)
            st = samc_fail(err, SAMC_ERR_IO, "%s: cannot write the JSON report", path);
    }
    if (!st)
        st = samc__tmp_commit(&tmp, path, err);
    samc__tmp_discard(tmp);
    cJSON_free(text);
    return st;
}
