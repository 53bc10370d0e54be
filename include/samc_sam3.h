/* samc_sam3.h - SAM 3 image segmentation by concept (facebookresearch/sam3,
 * Sam3Processor): every instance of what a short text and/or example boxes
 * describe, with a mask, a box and a score each.
 *
 *   samc_sam3_model *m;             // loaded once, shared read-only
 *   samc_sam3_load("sam3.pt", NULL, "bpe_simple_vocab_16e6.txt.gz", &m, &err);
 *   samc_sam3_processor *p;         // one use: its own state and workspace
 *   samc_sam3_processor_new(m, NULL, &p, &err);
 *   samc_sam3_processor_set_image(p, rgb, h, w, &err);
 *   samc_sam3_processor_set_text(p, "a dog", &err);            // runs the detector
 *   samc_sam3_processor_add_box(p, (float[]){.5f, .5f, .2f, .3f}, true, &err);
 *   samc_sam3_results r;  samc_sam3_processor_results(p, &r, &err);
 *
 * As the official processor: set_text and add_box each run the detector
 * on the prompt so far (add_box without a text uses the text "visual");
 * reset clears the text and the boxes; set_threshold re-runs the last
 * prompt; scores are sigmoid(logit) * sigmoid(presence), kept when above
 * the threshold (0.5 by default), boxes are x0, y0, x1, y1 in pixels of the
 * original image (not clipped), masks are probabilities at the original
 * size (> 0.5 is the mask).
 */
#ifndef SAMC_SAM3_H
#define SAMC_SAM3_H

#include <stdbool.h>
#include <stdint.h>

#include "samc_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samc_sam3_model samc_sam3_model;
typedef struct samc_sam3_processor samc_sam3_processor;

/* checkpoint: sam3.pt or .safetensors (detector.* keys); config: a JSON
 * file (a Sam3Image `_target_` tree, or tools/make_sam3_checkpoint.py's
 * {"image": ...}) or NULL for the released model; vocab: the official
 * bpe_simple_vocab_16e6.txt.gz. */
samc_status samc_sam3_load(const char *checkpoint, const char *config, const char *vocab, samc_sam3_model **out,
                           samc_error *err);
void samc_sam3_free(samc_sam3_model *m);

/* impl: "ref", "fast", ... (NULL: the default). */
samc_status samc_sam3_processor_new(samc_sam3_model *m, const char *impl, samc_sam3_processor **out,
                                    samc_error *err);
void samc_sam3_processor_free(samc_sam3_processor *p);
void samc_sam3_processor_set_threads(samc_sam3_processor *p, int n);

/* rgb: h x w x 3, row-major. Clears the prompt and results. */
samc_status samc_sam3_processor_set_image(samc_sam3_processor *p, const uint8_t *rgb, int h, int w,
                                          samc_error *err);
/* A non-empty UTF-8 text (longer than the context: truncated as the
 * official tokenizer does). */
samc_status samc_sam3_processor_set_text(samc_sam3_processor *p, const char *text, samc_error *err);
/* box: centre x, centre y, width, height, normalised to [0, 1] by the image
 * size; the centre must lie in the image and the size be positive. */
samc_status samc_sam3_processor_add_box(samc_sam3_processor *p, const float box[4], bool positive,
                                        samc_error *err);
void samc_sam3_processor_reset(samc_sam3_processor *p);
samc_status samc_sam3_processor_set_threshold(samc_sam3_processor *p, float threshold, samc_error *err);

typedef struct samc_sam3_results {
    int n;                 /* instances kept */
    int h, w;              /* the original image size */
    const float *scores;   /* n */
    const float *boxes;    /* n x 4: x0, y0, x1, y1 in pixels */
    const float *masks;    /* n x h x w probabilities */
} samc_sam3_results;

/* The last prompt's results (valid until the next call on p). */
samc_status samc_sam3_processor_results(const samc_sam3_processor *p, samc_sam3_results *out, samc_error *err);

#ifdef __cplusplus
}
#endif
#endif
