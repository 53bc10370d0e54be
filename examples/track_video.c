/* SPDX-License-Identifier: Apache-2.0 */
/* track_video.c - the video API end to end: one model, a tracker, a point
 * on the first frame, masks for every frame as propagation reaches it.
 *
 *   track_video MODEL FRAMES_DIR X Y [CONFIG]
 *
 * FRAMES_DIR holds JPEG frames named by number (00000.jpg, 00001.jpg, ...),
 * as the official SAM2VideoPredictor reads them.
 * Build: cc track_video.c $(pkg-config --cflags --libs samc)
 */
#include <samc.h>
#include <stdio.h>
#include <stdlib.h>

/* Called once per frame, in order, with the masks of every object. */
static samc_status on_frame(void *user, const samc_frame_masks *m)
{
    int *frames = user;
    const long hw = (long)m->height * m->width;
    for (int k = 0; k < m->n_obj; k++) {
        long area = 0;
        for (long i = 0; i < hw; i++)
            area += m->logits[k * hw + i] > 0.0f;
        printf("frame %d object %d: area %ld, object score %.3f\n", m->frame_idx, m->obj_ids[k], area,
               m->object_scores[k]);
    }
    (*frames)++;
    return SAMC_OK; /* anything else stops propagation with that status */
}

static void on_progress(void *user, const char *what, int done, int total)
{
    (void)user;
    fprintf(stderr, "%s %d/%d\n", what, done, total);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL FRAMES_DIR X Y [CONFIG]\n", argv[0]);
        return 2;
    }
    samc_error err;
    samc_model *model = NULL;
    samc_tracker *tracker = NULL;
    int frames = 0, rc = 1;

    samc_model_params mp = samc_model_default_params();
    mp.config = argc > 5 ? argv[5] : NULL;
    if (samc_model_load(argv[1], &mp, &model, &err))
        goto fail;
    samc_tracker_params tp = samc_tracker_default_params();
    tp.progress = on_progress;
    if (samc_tracker_new(model, &tp, &tracker, &err))
        goto fail;
    if (samc_tracker_open_frames_dir(tracker, argv[2], &err))
        goto fail;
    const float point[2] = {strtof(argv[3], NULL), strtof(argv[4], NULL)};
    const int32_t label[1] = {1};
    samc_frame_masks first;
    /* Object 1 on frame 0: the masks of that frame come back at once. */
    if (samc_tracker_add_points(tracker, 0, 1, point, label, 1, NULL, 1, &first, &err))
        goto fail;
    printf("prompted frame %d: %d object(s)\n", first.frame_idx, first.n_obj);
    if (samc_tracker_propagate(tracker, -1, -1, 0, on_frame, &frames, &err))
        goto fail;
    printf("tracked %d of %d frames (impl %s)\n", frames, samc_tracker_num_frames(tracker), samc_tracker_impl(tracker));
    rc = frames == samc_tracker_num_frames(tracker) ? 0 : 1;
    goto done;
fail:
    fprintf(stderr, "error (%s): %s\n", samc_status_name(err.status), err.msg);
done:
    samc_tracker_free(tracker);
    samc_model_free(model);
    return rc;
}
