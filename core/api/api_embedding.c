/* SPDX-License-Identifier: Apache-2.0 */
/* api_embedding.c - image embeddings held apart from a predictor or
 * processor (include/samc.h): the record both families fill, its size for
 * a cache's budget, and the check that a use is on the model it came from. */
#include <stdlib.h>

#include "core/api/api_internal.h"

samc_status samc__embedding_alloc(const samc_model *model, samc_embedding **out, samc_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return samc_fail(err, SAMC_ERR_NOMEM, "out of memory");
    (*out)->model = model;
    return SAMC_OK;
}

samc_status samc__embedding_check(const samc_embedding *e, const samc_model *m, const char *what, samc_error *err)
{
    if (e->model != m)
        return samc_fail(err, SAMC_ERR_ARG, "%s: the embedding was made with another model (%s, %s)", what,
                         samc_family_name(samc_model_family(e->model)), samc_model_config_name(e->model));
    return SAMC_OK;
}

const samc_model *samc_embedding_model(const samc_embedding *e) { return e ? e->model : NULL; }

int samc_embedding_height(const samc_embedding *e) { return e ? e->h : 0; }

int samc_embedding_width(const samc_embedding *e) { return e ? e->w : 0; }

/* Elements a tensor holds (an empty record: none, not a scalar's one). */
static int64_t held(const samc_tensor *t) { return t->data ? samc_numel(t) : 0; }

size_t samc_embedding_bytes(const samc_embedding *e)
{
    if (!e)
        return 0;
    int64_t n = held(&e->sam2.image_embed) + held(&e->sam2.feat_s0) + held(&e->sam2.feat_s1) +
                held(&e->sam2.vision_features) + held(&e->sam2.vision_pos);
    const samc_sam3_features *f = &e->sam3.f;
    for (int i = 0; i < f->n_levels; i++)
        n += held(&f->level[i]) + held(&f->pos[i]);
    for (int i = 0; i < f->n_sam2; i++)
        n += held(&f->sam2_level[i]) + held(&f->sam2_pos[i]);
    n += held(&e->sam3.src) + held(&e->sam3.src_pos);
    return sizeof *e + (size_t)n * sizeof(float);
}

void samc_embedding_free(samc_embedding *e)
{
    if (!e)
        return;
    samc_frame_features_release(&e->sam2);
    samc_sam3_image_release(&e->sam3);
    free(e);
}
