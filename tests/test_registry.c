/* SPDX-License-Identifier: Apache-2.0 */
/* test_registry.c - the layer and implementation registries hold together,
 * so the recipes of docs/architecture.md ("add a layer kind", "add an
 * implementation") cannot be half-followed: every kind has a body in ref and
 * fast, every row that has a body can run alone and has op-test inputs,
 * every parity point can run alone, instance names are unique, and
 * overrides resolve once, to the implementation asked for, or fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/sam2/sam2_model.h"
#include "core/models/sam3/sam3_model.h"
#include "core/nn/nn_ops.h"
#include "util/testutil.h"

static samc_sam2_model *load(const char *fixture)
{
    char *path = tu_src_path(fixture);
    samc_sam2_model *m = NULL;
    samc_error e = {0};
    if (samc_sam2_model_load(path, NULL, false, &m, &e))
        print_error("%s: %s\n", path, e.msg);
    free(path);
    assert_non_null(m);
    return m;
}

/* ref and fast have a body for every kind of the shared, tracker, SAM 2 and
 * SAM 3 tables (each table lists its bodies by name, so a kind left out is a
 * NULL here). */
static void test_builtin_tables_complete(void **s)
{
    (void)s;
    const char *names[] = {"ref", "fast"};
    for (int k = 0; k < 2; k++) {
        const samc_impl *impl = samc_impl_find(names[k]);
        assert_non_null(impl);
#define CHECK(table, type, kind)                                                                          \
    if (!samc_impl_has_body(impl, table, offsetof(type, kind)))                                           \
        print_error("%s has no body for %s\n", impl->name, #kind);                                         \
    assert_true(samc_impl_has_body(impl, table, offsetof(type, kind)));
#define SAMC_X(kind) CHECK(SAMC_OPS_NN, samc_nn_ops, kind)
        SAMC_NN_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) CHECK(SAMC_OPS_TRACKER, samc_tracker_ops, kind)
        SAMC_TRACKER_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) CHECK(SAMC_OPS_SAM2, samc_sam2_ops, kind)
        SAMC_SAM2_OPS(SAMC_X)
#undef SAMC_X
#define SAMC_X(kind) CHECK(SAMC_OPS_SAM3, samc_sam3_ops, kind)
        SAMC_SAM3_OPS(SAMC_X)
#undef SAMC_X
#undef CHECK
    }
    assert_string_equal(samc_impl_default()->name, "fast");
}

/* Every row of every part a family mounts: a body the kind lists know, a
 * runner where it is a parity point or has a body, op-test inputs where it
 * has a body, counts for '#' rows. */
static void check_family_rows(const samc_layer_family *fam, bool need_examples)
{
    for (int m = 0; m < fam->n_mounts; m++) {
        const samc_part_def *part = fam->mounts[m].part;
        for (int i = 0; i < part->n_rows; i++) {
            const samc_layer_def *d = &part->rows[i];
            const bool indexed = strchr(d->pattern, '#') != NULL;
            if (indexed && !d->count)
                print_error("%s/%s: a '#' row needs a count\n", part->name, d->pattern);
            assert_true(!indexed || d->count);
            if ((d->parity || d->parity_if) && !d->chained_only)
                assert_non_null(d->isolated);
            assert_true(!d->chained_only || !d->isolated);
            if (d->whole && (d->pattern[0] || !samc_kind_name(d->table, d->whole)))
                print_error("%s/%s: a whole-part body belongs to the part's own row and its kind list\n", part->name,
                            d->pattern);
            assert_true(!d->whole || (!d->pattern[0] && samc_kind_name(d->table, d->whole)));
            if (!d->body)
                continue;
            if (!samc_kind_name(d->table, d->body) || (d->body2 && !samc_kind_name(d->table, d->body2)))
                print_error("%s/%s: its body is not in the kind lists\n", part->name, d->pattern);
            assert_non_null(samc_kind_name(d->table, d->body));
            if (need_examples && (!d->isolated || !d->example))
                print_error("%s/%s: a row with a body needs an isolated runner and op-test inputs\n", part->name,
                            d->pattern);
            if (need_examples)
                assert_true(d->isolated && d->example);
        }
    }
}

static void test_rows(void **s)
{
    (void)s;
    check_family_rows(&samc_sam2_family, true);
    check_family_rows(&samc_sam3_family, true);
}

/* fast serves every layer of a SAM 3 model itself: no body is left to its
 * fallback (ref), for any kind the SAM 3 rows name. */
static void test_sam3_no_fallback(void **s)
{
    (void)s;
    char *path = tu_src_path("fixtures/sam3/tiny_s2_text_boxes.h5");
    samc_sam3_model *m = NULL;
    samc_error e = {0};
    assert_int_equal(samc_sam3_model_load(path, NULL, &m, &e), SAMC_OK);
    samc_exec x;
    assert_int_equal(samc_sam3_exec_init(&x, m, "fast", &e), SAMC_OK);
    const samc_impl *fast = samc_impl_find("fast");
    int bodies = 0;
    for (int i = 0; i < x.n_layers; i++) {
        const samc_layer *L = &x.layers[i];
        if (!L->def->body)
            continue;
        if (L->impl != fast)
            print_error("%s (%s) is served by %s\n", L->name, samc_kind_name(L->def->table, L->def->body),
                        L->impl->name);
        assert_ptr_equal(L->impl, fast);
        bodies++;
    }
    assert_true(bodies >= 30);
    samc_exec_free(&x);
    samc_sam3_model_free(m);
    free(path);
}

static void test_instances_unique(void **s)
{
    (void)s;
    samc_sam2_model *m = load("fixtures/tiny_a_sam21_s128.h5");
    samc_exec x;
    assert_int_equal(samc_sam2_exec_init(&x, m, NULL), SAMC_OK);
    for (int i = 0; i < x.n_layers; i++) {
        for (int j = i + 1; j < x.n_layers; j++)
            assert_string_not_equal(x.layers[i].name, x.layers[j].name);
        assert_ptr_equal(samc_exec_find(&x, x.layers[i].name), &x.layers[i]);
    }
    assert_int_equal(m->image_encoder.depth, 7); /* the fixture's trunk */
    assert_non_null(samc_exec_find(&x, "image_encoder.trunk.blocks.6"));
    assert_null(samc_exec_find(&x, "image_encoder.trunk.blocks.7"));
    samc_exec_free(&x);
    samc_sam2_model_free(m);
}

/* Overrides resolve once, to what was asked, prefixes included; bad ones fail. */
static void test_overrides(void **s)
{
    (void)s;
    samc_sam2_model *m = load("fixtures/tiny_a_sam21_s128.h5");
    samc_exec x;
    samc_error e = {0};
    assert_int_equal(samc_sam2_exec_init(&x, m, NULL), SAMC_OK);
    const samc_impl *ref = samc_impl_find("ref"), *fast = samc_impl_find("fast");
    assert_ptr_equal(samc_exec_find(&x, "@preprocess")->impl, fast);
    assert_int_equal(samc_exec_add_override(&x, "@preprocess=ref", &e), SAMC_OK);
    assert_ptr_equal(samc_exec_find(&x, "@preprocess")->impl, ref); /* no longer silently ignored */
    assert_int_equal(samc_exec_add_override(&x, "image_encoder.trunk=ref", &e), SAMC_OK);
    assert_int_equal(samc_exec_add_override(&x, "image_encoder.trunk.blocks.3=fast", &e), SAMC_OK);
    assert_ptr_equal(samc_exec_find(&x, "image_encoder.trunk.blocks.2")->impl, ref);
    assert_ptr_equal(samc_exec_find(&x, "image_encoder.trunk.blocks.3")->impl, fast); /* the longest match */
    assert_ptr_equal(samc_exec_find(&x, "image_encoder.neck")->impl, fast);
    assert_ptr_equal(samc_exec_find(&x, "image_encoder.trunk.blocks.3")->ops, fast->ops[SAMC_OPS_SAM2]);

    samc_error_clear(&e);
    assert_int_equal(samc_exec_add_override(&x, "image_encoder.trunk.block=ref", &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "unknown layer 'image_encoder.trunk.block'");
    samc_error_clear(&e);
    assert_int_equal(samc_exec_add_override(&x, "image_encoder=nope", &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "unknown implementation 'nope' (known: ref, fast");
    samc_error_clear(&e);
    assert_int_equal(samc_exec_set_impl(&x, "nope", &e), SAMC_ERR_ARG);
    samc_exec_free(&x);
    samc_sam2_model_free(m);
}

/* An implementation without a body for a layer (and no fallback) cannot be
 * asked to serve it: the override fails and names the layer; a fallback
 * fills the gap. */
static const samc_sam2_ops only_preprocess = {.preprocess = NULL};
static void test_lacking_body(void **s)
{
    (void)s;
    samc_impl partial = {.name = "partial", .about = "test", .tol = 1e-4,
                         .ops = {[SAMC_OPS_SAM2] = &only_preprocess}};
    assert_int_equal(samc_impl_register(&partial, NULL), SAMC_OK);
    samc_sam2_model *m = load("fixtures/tiny_a_sam21_s128.h5");
    samc_exec x;
    samc_error e = {0};
    assert_int_equal(samc_sam2_exec_init(&x, m, NULL), SAMC_OK);
    assert_int_equal(samc_exec_add_override(&x, "image_encoder.neck=partial", &e), SAMC_ERR_ARG);
    tu_assert_contains(e.msg, "has no body for layer image_encoder.neck");
    assert_ptr_equal(samc_exec_find(&x, "image_encoder.neck")->impl, samc_impl_find("fast")); /* unchanged */
    samc_error_clear(&e);
    assert_int_equal(samc_exec_set_impl(&x, "partial", &e), SAMC_ERR_ARG);
    assert_ptr_equal(x.impl, samc_impl_find("fast"));
    partial.fallback = "ref";
    assert_int_equal(samc_exec_set_impl(&x, "partial", &e), SAMC_OK);
    assert_ptr_equal(samc_exec_find(&x, "image_encoder.neck")->impl, samc_impl_find("ref"));
    samc_exec_free(&x);
    samc_sam2_model_free(m);
    samc_impl_unregister(&partial);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_tables_complete), cmocka_unit_test(test_rows),
        cmocka_unit_test(test_sam3_no_fallback),
        cmocka_unit_test(test_instances_unique),        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_lacking_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
