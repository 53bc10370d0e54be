/* SPDX-License-Identifier: Apache-2.0 */
/* segment_concept.c - the SAM 3 API end to end: load a SAM 3 model once
 * (the same samc_model_load as SAM 2: the family is detected), make a
 * processor, set an image and a text, list every instance found, and write
 * the masks of all of them as one PNG.
 *
 *   segment_concept MODEL VOCAB IMAGE TEXT [THRESHOLD] [OUT.png] [CONFIG]
 *
 * MODEL: sam3.pt or .safetensors (a SAM 3 parity dump .h5 where the
 * program links samc's parity harness); VOCAB: the official
 * bpe_simple_vocab_16e6.txt.gz ("-": a dump's own); CONFIG: a
 * SAM 3 config .json (default: the released model's).
 * Build: cc segment_concept.c $(pkg-config --cflags --libs samc)
 */
#include <samc.h>
#include <samc_sam3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL VOCAB IMAGE TEXT [THRESHOLD] [OUT.png] [CONFIG]\n", argv[0]);
        return 2;
    }
    samc_error err;
    samc_model *model = NULL;
    samc_sam3_processor *proc = NULL;
    uint8_t *rgb = NULL, *png = NULL;
    int h = 0, w = 0, rc = 1;

    samc_model_params mp = samc_model_default_params();
    mp.vocab = strcmp(argv[2], "-") ? argv[2] : NULL;
    mp.config = argc > 7 ? argv[7] : NULL;
    if (samc_model_load(argv[1], &mp, &model, &err))
        goto fail;
    if (samc_model_family(model) != SAMC_FAMILY_SAM3) {
        fprintf(stderr, "%s: a %s model; this program needs SAM 3\n", argv[1],
                samc_family_name(samc_model_family(model)));
        goto done;
    }
    samc_sam3_processor_params pp = samc_sam3_processor_default_params(); /* impl "fast", threshold 0.5 */
    if (argc > 5)
        pp.threshold = strtof(argv[5], NULL);
    if (samc_sam3_processor_new(model, &pp, &proc, &err))
        goto fail;
    if (samc_read_image(argv[3], &rgb, &h, &w, &err))
        goto fail;
    if (samc_sam3_processor_set_image(proc, rgb, h, w, &err)) /* the image features, once */
        goto fail;
    if (samc_sam3_processor_set_text(proc, argv[4], &err)) /* any number of prompts after */
        goto fail;
    samc_sam3_results r;
    if (samc_sam3_processor_results(proc, &r, &err))
        goto fail;
    for (int i = 0; i < r.n; i++)
        printf("instance %d: score %.4f, box (%.1f, %.1f, %.1f, %.1f)\n", i, r.scores[i], r.boxes[4 * i],
               r.boxes[4 * i + 1], r.boxes[4 * i + 2], r.boxes[4 * i + 3]);
    printf("%d instance(s) above %g (impl %s, %d thread(s))\n", r.n, pp.threshold,
           samc_sam3_processor_impl(proc), samc_sam3_processor_threads(proc));
    if (argc > 6) {
        const long n = (long)h * w;
        if (!(png = calloc((size_t)n, 1))) {
            fprintf(stderr, "out of memory\n");
            goto done;
        }
        for (int i = 0; i < r.n; i++)
            for (long k = 0; k < n; k++)
                if (r.masks[(long)i * n + k] > 0.5f) /* masks are probabilities */
                    png[k] = 255;
        if (samc_write_png(argv[6], png, h, w, 1, &err))
            goto fail;
    }
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "error (%s): %s\n", samc_status_name(err.status), err.msg);
done:
    free(png);
    samc_free(rgb);
    samc_sam3_processor_free(proc); /* processors first, */
    samc_model_free(model);         /* then the model they share */
    return rc;
}
