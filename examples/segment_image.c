/* SPDX-License-Identifier: Apache-2.0 */
/* segment_image.c - the image API end to end: load a model once, make a
 * predictor, embed an image, ask for masks at a point, write the best one.
 *
 *   segment_image MODEL IMAGE X Y [OUT.png] [CONFIG]
 *
 * MODEL: an official checkpoint (.pt / .safetensors);
 * CONFIG: a preset name or .json (default: detected from the weights).
 * Build: cc segment_image.c $(pkg-config --cflags --libs samc)
 */
#include <samc.h>
#include <stdio.h>
#include <stdlib.h>

/* Library messages (model loaded, implementation chosen) go through here. */
static void on_log(samc_log_level level, const char *msg, void *user)
{
    (void)user;
    fprintf(stderr, "[samc %d] %s\n", (int)level, msg);
}

static void on_progress(void *user, const char *what, int done, int total)
{
    (void)user;
    if (done == total)
        fprintf(stderr, "%s: %d/%d done\n", what, done, total);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL IMAGE X Y [OUT.png] [CONFIG]\n", argv[0]);
        return 2;
    }
    printf("samc %s\n", samc_version());
    samc_log_set(on_log, NULL);
    samc_log_set_level(SAMC_LOG_INFO);

    samc_error err;
    samc_model *model = NULL;
    samc_predictor *pred = NULL;
    uint8_t *rgb = NULL;
    samc_masks masks = {0};
    int h = 0, w = 0, rc = 1;

    samc_model_params mp = samc_model_default_params();
    mp.config = argc > 6 ? argv[6] : NULL;
    if (samc_model_load(argv[1], &mp, &model, &err))
        goto fail;
    samc_predictor_params pp = samc_predictor_default_params(); /* impl "fast", all threads */
    pp.progress = on_progress;
    if (samc_predictor_new(model, &pp, &pred, &err))
        goto fail;
    if (samc_read_image(argv[2], &rgb, &h, &w, &err))
        goto fail;
    if (samc_predictor_set_image(pred, rgb, h, w, &err)) /* the image embedding, once */
        goto fail;

    const float point[2] = {strtof(argv[3], NULL), strtof(argv[4], NULL)};
    const int32_t label[1] = {1};                        /* 1: foreground */
    samc_predict_request rq = {.point_coords = point, .point_labels = label, .n_points = 1,
                               .multimask_output = 1};   /* three candidates, 0/1 masks */
    if (samc_predictor_predict(pred, &rq, &masks, &err))
        goto fail;
    int best = 0;
    for (int k = 0; k < masks.num_masks; k++) {
        long area = 0;
        for (long i = 0; i < (long)masks.height * masks.width; i++)
            area += masks.masks[(long)k * masks.height * masks.width + i] > 0;
        printf("mask %d: predicted IoU %.4f, area %ld pixels\n", k, masks.iou[k], area);
        if (masks.iou[k] > masks.iou[best])
            best = k;
    }
    printf("best mask: %d (impl %s, %d thread(s))\n", best, samc_predictor_impl(pred), samc_predictor_threads(pred));
    if (argc > 5) {
        const long n = (long)masks.height * masks.width;
        uint8_t *png = malloc((size_t)n);
        for (long i = 0; png && i < n; i++)
            png[i] = masks.masks[(long)best * n + i] > 0 ? 255 : 0;
        samc_status st = png ? samc_write_png(argv[5], png, masks.height, masks.width, 1, &err) : SAMC_ERR_NOMEM;
        free(png);
        if (st)
            goto fail;
    }
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "error (%s): %s\n", samc_status_name(err.status), err.msg);
done:
    samc_masks_free(&masks);
    samc_free(rgb);
    samc_predictor_free(pred); /* predictors first, */
    samc_model_free(model);    /* then the model they share */
    return rc;
}
