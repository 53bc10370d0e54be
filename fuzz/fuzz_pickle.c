/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_pickle.c - the restricted pickle interpreter (core/io/pickle.c) on raw
 * data.pkl bytes. Whole-file mutation of a .pt barely reaches the pickle
 * (zip CRCs), so the interpreter is fuzzed directly. Seeds: data.pkl of the
 * fixture checkpoints and fuzz/seeds/pickle/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io/pickle.h"
#include "fuzz_common.h"

/* What weights_pt.c relies on for every tensor it reads. */
static void check_tensor(const samc_pkl_obj *t)
{
    if (t->type != SAMC_PKL_TENSOR)
        return;
    const samc_pkl_obj *s = t->u.tensor.storage;
    if (!s || s->type != SAMC_PKL_STORAGE || t->u.tensor.ndim < 0 || t->u.tensor.ndim > SAMC_MAX_DIMS ||
        !s->u.storage.key || s->u.storage.key->type != SAMC_PKL_STR || s->u.storage.numel < 0 ||
        (unsigned)s->u.storage.dtype >= SAMC_PKL_DT_COUNT) {
        fprintf(stderr, "fuzz invariant: malformed tensor descriptor\n");
        abort();
    }
    (void)strlen(s->u.storage.key->u.str.s);
}

/* Visit a bounded number of objects (cycles through the memo are legal). */
static void walk(const samc_pkl_obj *root)
{
    const samc_pkl_obj *stack[256];
    int sp = 0, visits = 0;
    stack[sp++] = root;
    while (sp && visits++ < 100000) {
        const samc_pkl_obj *o = stack[--sp];
        check_tensor(o);
        (void)samc_pkl_type_name(o->type);
        switch (o->type) {
        case SAMC_PKL_STR: (void)memchr(o->u.str.s, 0, o->u.str.len + 1); break;
        case SAMC_PKL_TUPLE:
        case SAMC_PKL_LIST:
            for (size_t i = 0; i < o->u.seq.n && sp < 256; i++)
                stack[sp++] = o->u.seq.items[i];
            break;
        case SAMC_PKL_DICT:
            for (size_t i = 0; i < 2 * o->u.dict.n && sp < 256; i++)
                stack[sp++] = o->u.dict.kv[i];
            break;
        default: break;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samc_error err = {0};
    samc_pickle *p = NULL;
    samc_status st = samc_pickle_load(data, size, "fuzz.pkl", &p, &err);
    fuzz_check_error(st, &err, "fuzz.pkl", "samc_pickle_load");
    if (st) {
        if (p)
            abort();
        return 0;
    }
    const samc_pkl_obj *root = samc_pickle_root(p);
    if (!root)
        abort();
    walk(root);
    const samc_pkl_obj *m = samc_pkl_dict_get(root, "model");
    if (m)
        walk(m);
    samc_pickle_free(p);
    return 0;
}
