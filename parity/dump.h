/* SPDX-License-Identifier: Apache-2.0 */
/* dump.h - reading parity dumps (the format: tools/README.md, "What is written"). */
#ifndef SAMC_PARITY_DUMP_H
#define SAMC_PARITY_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/tensor.h"

typedef struct samc_dump samc_dump;

#define SAMC_DUMP_MODULE_MAX 128
#define SAMC_DUMP_MAX_OBJS 16

typedef struct samc_dump_record {
    int index;                        /* completion order (NNNNNN) */
    char module[SAMC_DUMP_MODULE_MAX];
    int call;
    int frame_idx, obj_id;            /* -1 when absent */
    int n_objs;                       /* obj_ids: the objects of the tracker state (batch order); 0 when absent */
    int objs[SAMC_DUMP_MAX_OBJS];
} samc_dump_record;

samc_status samc_dump_open(const char *path, samc_dump **out, samc_error *err);
void samc_dump_close(samc_dump *d);
const char *samc_dump_path(const samc_dump *d);

/* String attribute `attr` of object `obj` ("/model", "/inputs", ...).
 * *out is malloc'd. Missing -> SAMC_ERR_KEY naming the file and attribute. */
samc_status samc_dump_attr_str(samc_dump *d, const char *obj, const char *attr, char **out, samc_error *err);
/* Numeric attribute as double; *is_none set when it is an empty (None) attribute. */
samc_status samc_dump_attr_num(samc_dump *d, const char *obj, const char *attr, double *out, bool *is_none,
                               samc_error *err);
bool samc_dump_has_attr(samc_dump *d, const char *obj, const char *attr);
bool samc_dump_exists(samc_dump *d, const char *path);

/* Any integer or float dataset as float32. */
samc_status samc_dump_read(samc_dump *d, const char *path, samc_tensor *out, samc_error *err);
/* A uint8 dataset (images). data is malloc'd; dims up to 4. */
samc_status samc_dump_read_u8(samc_dump *d, const char *path, uint8_t **data, int *ndim, int64_t *dims,
                              samc_error *err);
/* An integer dataset as int32 (labels). */
samc_status samc_dump_read_i32(samc_dump *d, const char *path, int32_t **data, int64_t *n, samc_error *err);

/* A float64 dataset kept in double (the AMG task's point grids, which the
 * official generator scales in float64 before its float32 cast). */
samc_status samc_dump_read_f64(samc_dump *d, const char *path, double **data, int *ndim, int64_t *dims, int max_dims,
                               samc_error *err);

/* The /trace records, in completion order. *recs is malloc'd. */
samc_status samc_dump_records(samc_dump *d, samc_dump_record **recs, int *n, samc_error *err);
/* Names of the datasets directly under `group` ("/trace/000003/out"). */
samc_status samc_dump_list(samc_dump *d, const char *group, char ***names, int *n, samc_error *err);
void samc_dump_free_names(char **names, int n);

#endif
