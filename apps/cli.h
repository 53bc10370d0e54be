/* cli.h - shared pieces of the samc command line. */
#ifndef SAMC_APPS_CLI_H
#define SAMC_APPS_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "samc_status.h"

/* Parse exactly `n` comma-separated finite numbers ("12.5,40"). */
bool cli_parse_floats(const char *s, float *out, int n);
/* "X,Y" or "X,Y,LABEL" (label defaults to 1). */
samc_status cli_parse_point(const char *s, float *xy, int32_t *label, samc_error *err);
/* "X0,Y0,X1,Y1". */
samc_status cli_parse_box(const char *s, float *box, samc_error *err);
/* Positive integer in [lo, hi]. */
samc_status cli_parse_int(const char *flag, const char *s, int lo, int hi, int *out, samc_error *err);

/* mkdir -p */
samc_status cli_mkdirs(const char *dir, samc_error *err);

/* A set of output files written under temporary names and renamed to their
 * final names only when all of them were written, so a failed or killed run
 * leaves no half-written and no partial set of outputs (only temporaries,
 * which are removed on failure). */
typedef struct cli_outputs {
    int n, cap;
    char **tmp, **final;
} cli_outputs;
/* The temporary name to write `final` to ("DIR/.NAME.tmp<pid>"); NULL when
 * out of memory. */
const char *cli_output_tmp(cli_outputs *o, const char *final, samc_error *err);
/* Rename every temporary to its final name; on failure remove what is left. */
samc_status cli_outputs_commit(cli_outputs *o, samc_error *err);
/* Remove the temporaries (after a failure) and free the set. */
void cli_outputs_discard(cli_outputs *o);
/* Write n bytes to `path` (the caller passes a temporary name). */
samc_status cli_write_bytes(const char *path, const void *data, size_t n, samc_error *err);

int cmd_segment(int argc, char **argv);
int cmd_parity(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_track(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_amg(int argc, char **argv);

#endif
