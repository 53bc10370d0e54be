/* SPDX-License-Identifier: Apache-2.0 */
/* track_concept.c - SAM 3's video API end to end: load sam3.pt (both halves:
 * the detector and the tracker), start a session on a directory of frames,
 * prompt a concept on the first frame and track every instance of it
 * forward, printing each frame's objects as the propagation reaches it.
 *
 *   track_concept MODEL VOCAB FRAMES_DIR TEXT [CONFIG]
 *
 * MODEL: sam3.pt or .safetensors; VOCAB: the official
 * bpe_simple_vocab_16e6.txt.gz; FRAMES_DIR: JPEG frames named by number
 * (00000.jpg, ...); CONFIG: a SAM 3 config .json (default: the released
 * model's).
 * Build: cc track_concept.c $(pkg-config --cflags --libs samc)
 */
#include <samc.h>
#include <samc_sam3.h>
#include <stdio.h>
#include <stdlib.h>

/* Called for every frame with results, in propagation order. */
static samc_status on_frame(void *user, const samc_sam3_frame *f)
{
    int *frames = user;
    (*frames)++;
    printf("frame %d: %d object(s)", f->frame, f->n);
    for (int k = 0; k < f->n; k++) {
        long area = 0;
        for (long i = 0; i < (long)f->h * f->w; i++)
            area += f->masks[(long)k * f->h * f->w + i];
        printf("  [id %d, score %.3f, %ld px]", f->obj_ids[k], f->probs[k], area);
    }
    printf("\n");
    return SAMC_OK; /* anything else stops the propagation */
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL VOCAB FRAMES_DIR TEXT [CONFIG]\n", argv[0]);
        return 2;
    }
    samc_error err = {0};
    samc_model *model = NULL;
    samc_sam3_tracker *t = NULL;
    int frames = 0, rc = 1;
    samc_model_params mp = samc_model_default_params();
    mp.vocab = argv[2];
    mp.config = argc > 5 ? argv[5] : NULL;
    if (samc_model_load(argv[1], &mp, &model, &err))
        goto done;
    samc_sam3_tracker_params tp = samc_sam3_tracker_default_params(); /* impl "fast" */
    if (samc_sam3_tracker_new(model, &tp, argv[3], &t, &err)) /* frames decoded as needed */
        goto done;
    /* the concept on frame 0 (the session starts over), then forward from it */
    if (samc_sam3_tracker_add_prompt(t, 0, argv[4], NULL, 1, NULL, NULL, &err) ||
        samc_sam3_tracker_propagate(t, SAMC_SAM3_FORWARD, 0, -1, on_frame, &frames, &err))
        goto done;
    printf("tracked %d of %d frames (impl %s)\n", frames, samc_sam3_tracker_num_frames(t), samc_sam3_tracker_impl(t));
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "error: %s\n", err.msg);
    samc_sam3_tracker_free(t); /* sessions first, */
    samc_model_free(model);    /* then the model they share */
    return rc;
}
