/* isolated_internal.h - shared by the isolated-mode runners. */
#ifndef SAMC_PARITY_ISOLATED_INTERNAL_H
#define SAMC_PARITY_ISOLATED_INTERNAL_H

#include "harness_internal.h"

#define MAX_OUT 16

typedef struct outputs { /* what a runner produced */
    int n;
    char names[MAX_OUT][48];
    samc_tensor t[MAX_OUT];
    const char *target;      /* capture: the module whose emission we keep */
} outputs;

void outputs_free(outputs *o);
/* A new named output slot (NULL when full). */
samc_tensor *out_slot(outputs *o, const char *name);
/* A trace callback keeping the first emission of o->target. */
void capture(void *user, const char *module, int n, const char *const *slots, const samc_tensor *const *t);
/* in/<name> if recorded by keyword, else in/<pos> (positional). */
samc_status read_in(parity_run *r, int rec, const char *name, const char *pos, samc_tensor *t, samc_error *err);
bool has_in(parity_run *r, int rec, const char *name);
/* A scalar input recorded as an attribute of in/. */
samc_status in_attr(parity_run *r, int rec, const char *name, const char *pos, double *v, bool *none,
                    samc_error *err);

/* Memory-path points (isolated_video.c); SAMC_ERR_KEY when `module` is not one. */
samc_status run_video_point(parity_run *r, int rec, const char *module, outputs *o, samc_error *err);

#endif
