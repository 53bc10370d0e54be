/* sam2_bind_internal.h - helpers shared by the binders of core/sam2_bind*.c. */
#ifndef SAMC_CORE_SAM2_BIND_INTERNAL_H
#define SAMC_CORE_SAM2_BIND_INTERNAL_H

#include "error.h"
#include "sam2_model.h"

typedef struct binder {
    const samc_weights *w;
    char prefix[160];
} binder;

/* The weights of "<prefix><key>" (checked to exist before binding). */
const float *W(const binder *b, const char *fmt, ...) SAMC_PRINTF(2, 3);
void set_prefix(binder *b, const char *fmt, ...) SAMC_PRINTF(2, 3);
samc_linear lin(const binder *b, const char *name, int in, int out);
samc_norm nrm(const binder *b, const char *name, int dim, float eps);
samc_conv2d cnv(const binder *b, const char *name, int cin, int cout, int k, int stride, int pad);
samc_mlp mlp(const binder *b, const char *name, int in, int hidden, int out, int n, bool sig);
samc_attention attn(const binder *b, const char *name, int dim, int internal, int heads);

/* Memory encoder, memory attention, object pointers (core/sam2_bind_video.c). */
void samc_sam2_bind_video(samc_sam2_model *m, binder *b);

#endif
