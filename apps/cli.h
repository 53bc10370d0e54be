/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - shared pieces of the samc command line. */
#ifndef SAMC_APPS_CLI_H
#define SAMC_APPS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samc_status.h"

/* Exit codes of every command (README "Exit codes"): 0 success, 2 a usage
 * error (bad or missing argument, prompt out of range), 1 a runtime failure
 * (file missing or unreadable, bad checkpoint, output not writable). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_RUNTIME = 1, CLI_EXIT_USAGE = 2 };
int cli_exit_code(samc_status st);

/* Ctrl-C (apps/cli_signal.c): SIGINT and SIGTERM become the library's abort
 * callback. cli_catch_interrupts installs the handlers (the first signal
 * sets a flag, a second one kills); cli_abort_requested is the
 * samc_abort_fn to put in the params; cli_interrupted the signal caught (0:
 * none); cli_interrupt_exit says "samc CMD: interrupted" (and what was
 * kept) on stderr and returns the exit status, 128 + the signal (130). */
void cli_catch_interrupts(void);
bool cli_abort_requested(void *user);
int cli_interrupted(void);
int cli_interrupt_exit(const char *cmd, const char *what_was_kept);

/* -q/--quiet: 0, default 1, -v/--verbose: 2 (set by samc_main.c for every command). */
extern int cli_verbosity;

/* ---- options (apps/cli_opts.c, on getopt_long) ---------------------------- */

/* One option of a command. */
typedef struct cli_option {
    const char *name;  /* "threads": --threads */
    char short_name;   /* 't': -t; 0: none */
    const char *value; /* what it takes ("N", "DIR"); NULL: a flag */
} cli_option;

#define CLI_MAX_OPTIONS 48
typedef struct cli_parser {
    const char *cmd;
    int argc;
    char **argv;
    const cli_option *opts;
    int n;
    struct option longs[CLI_MAX_OPTIONS + 1];
    char shorts[3 * CLI_MAX_OPTIONS + 2];
    int first_positional; /* after the last cli_next: argv[first_positional..argc) */
} cli_parser;

/* Parse argv[1..argc) (argv[0] the command) against opts[0..n). */
void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv, const cli_option *opts, int n);
/* The next option: its index in opts (*value its argument, NULL for a flag);
 * -1 when none is left (the positional arguments are then
 * argv[p->first_positional..argc), in order); -2 on a usage error, with
 * the message in err: "unknown option '--thredas' (did you mean
 * '--threads'?)", "option '--out' needs a value: --out DIR", "option
 * '--multimask' takes no value". */
int cli_next(cli_parser *p, const char **value, samc_error *err);

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
    /* When set, the commit first removes the files of stale_dir whose names
     * match one of the `stale` patterns (fnmatch, NULL-terminated) and that
     * this set does not write: an earlier run's outputs (mask_2.png of a
     * --multimask run) never sit beside the new ones. */
    const char *stale_dir;
    const char *const *stale;
} cli_outputs;
/* The temporary to write `final` to ("DIR/.NAME.XXXXXX", created
 * exclusively: core/base/tmpfile.h); NULL after a failure (named in err). */
const char *cli_output_tmp(cli_outputs *o, const char *final, samc_error *err);
/* Rename every temporary to its final name; on failure remove what is left. */
samc_status cli_outputs_commit(cli_outputs *o, samc_error *err);
/* Remove the temporaries (after a failure) and free the set. */
void cli_outputs_discard(cli_outputs *o);
/* What segment (SAM 2 and SAM 3) and amg write into --out: an earlier run's
 * files of these names that a new run does not rewrite are removed when
 * the new set is committed. */
extern const char *const cli_segment_outputs[];
extern const char *const cli_amg_outputs[];
/* Remove the regular files of `dir` matching `patterns` except `keep`
 * (full paths, n of them); apps/cli_files.c. */
void cli_remove_stale(const char *dir, const char *const *patterns, const char *const *keep, int n);
/* Append one line (text + '\n') to fd, whole or not at all: a failed write
 * is cut back to *len, the file's length before it; *len advances. */
samc_status cli_append_line(int fd, const char *what, const char *text, long long *len, samc_error *err);
/* `s` with control characters written as \xNN (file names in terminal
 * output: an escape sequence in a frame's name must not reach the screen). */
void cli_escape(const char *s, char *out, size_t n);
/* SIGINT/SIGTERM/SIGHUP: remove every temporary samc created, then die of
 * the signal as before (apps/cli_files.c; installed by samc_main.c). */
void cli_install_signal_cleanup(void);
/* Write n bytes to `path` (a temporary made by cli_output_tmp). */
samc_status cli_write_bytes(const char *path, const void *data, size_t n, samc_error *err);

/* --out DIR: created (mkdir -p) and checked writable before any inference;
 * failures name DIR and the system's reason. A DIR too long for the
 * system's limits with CLI_OUT_NAME_ROOM more bytes (the longest name samc
 * writes under it, "masks/<frame>_obj<id>.png" included) is refused before
 * anything is created. */
#define CLI_OUT_NAME_ROOM 320
samc_status cli_prepare_out_dir(const char *dir, samc_error *err);
/* Write `final` atomically (a temporary in the same directory, then rename):
 * a reader never sees a half-written file; errors name `final`. */
samc_status cli_write_file_atomic(const char *final, const void *data, size_t n, samc_error *err);
samc_status cli_write_png_atomic(const char *final, int w, int h, int comp, const uint8_t *data, samc_error *err);
/* The same into a set committed together (segment). */
samc_status cli_outputs_bytes(cli_outputs *o, const char *final, const void *data, size_t n, samc_error *err);
samc_status cli_outputs_png(cli_outputs *o, const char *final, int w, int h, int comp, const uint8_t *data,
                            samc_error *err);

/* The prompt check shared by segment and track (apps/cli_prompt.c): points
 * inside the w x h frame (0 <= x < w, 0 <= y < h), a box inside [0,w]x[0,h];
 * `where` names the prompt in messages ("--point", "--prompt '0:1:box=..'"). */
samc_status cli_check_points(const char *where, const float *xy, int n, int w, int h, samc_error *err);
samc_status cli_check_box(const char *where, const float *box, int w, int h, samc_error *err);
/* A SAM 3 exemplar box: cli_check_box, and not empty. */
samc_status cli_check_exemplar_box(const char *where, const float *box, int w, int h, samc_error *err);
/* Pixels x0,y0,x1,y1 -> Sam3Processor's normalised cx, cy, w, h. */
void cli_box_cxcywh(const float *box, int w, int h, float out[4]);

/* Progress on stderr (apps/cli_progress.c): "\r" updates on a terminal,
 * plain lines otherwise, nothing with --quiet. */
void cli_progress(const char *what, int done, int total, const char *detail);
void cli_progress_end(void);
double cli_now(void);

/* Drawing (apps/cli_render.c): a mask blended into an RGB image with its
 * contour drawn (logits > 0, or bits != 0), and the prompt markers (points:
 * filled discs, green foreground / red background; box: a rectangle).
 * cli_mask_color: mask k's colour, a different one for every k >= 0. */
void cli_mask_color(int64_t k, uint8_t out[3]);
void cli_blend_mask(uint8_t *rgb, int w, int h, const float *logits, const uint8_t color[3]);
void cli_blend_bits(uint8_t *rgb, int w, int h, const uint8_t *bits, const uint8_t color[3]);
void cli_draw_points(uint8_t *rgb, int w, int h, const float *xy, const int32_t *labels, int n);
void cli_draw_box(uint8_t *rgb, int w, int h, const float *box, const uint8_t color[3]);

typedef struct cJSON cJSON;
/* The RLE a mask record carries (--rle): "coco_rle", the compressed string
 * of pycocotools' rleToString (the default), or "rle", the uncompressed
 * counts of sam2/utils/amg.py mask_to_rle_pytorch. */
typedef enum cli_rle_format { CLI_RLE_COCO = 0, CLI_RLE_UNCOMPRESSED } cli_rle_format;
samc_status cli_parse_rle(const char *v, cli_rle_format *f, samc_error *err);
/* One mask's record (apps/cli_mask_json.c): the RLE of `fmt`, bbox (XYWH as
 * the generator's records), area, stability score (offset 1, as
 * SAM2AutomaticMaskGenerator). `logits`: h*w, > 0 is the mask. */
samc_status cli_mask_json(cJSON *obj, const float *logits, int h, int w, cli_rle_format fmt, samc_error *err);
/* A new record appended to arr for the image's mask k: "index" and "file"
 * (mask_<k>.png, as segment writes it); the caller adds its own fields,
 * then cli_mask_json. */
cJSON *cli_mask_entry(cJSON *arr, int k);
/* "points": [[x,y,label],...], "box": [x0,y0,x1,y1] of a prompt. */
void cli_prompt_json(cJSON *obj, const float *xy, const int32_t *labels, int n, const float *box);

/* Process settings of the commands that run the model many times
 * (apps/cli_tuning.c): re-execute with OMP_WAIT_POLICY=PASSIVE unless it is
 * set (idle OpenMP threads do not spin), and keep freed memory for reuse. */
void cli_passive_wait_policy(int argc, char **argv);
void cli_keep_freed_memory(void);

/* The usage text of a command (samc_main.c), for `samc CMD --help`. */
void cli_usage(const char *cmd, void *file);

int cmd_segment(int argc, char **argv);
int cmd_parity(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_track(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_amg(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* The bundled demo model, its config and image (fixtures/demo or installed). */
void cli_demo_paths(char *model, char *config, char *image, size_t n);

#endif
