/* SPDX-License-Identifier: Apache-2.0 */
/* samc_main.c - the `samc` command: the command table, global flags
 * (--version, -h/--help, -v/--verbose, -q/--quiet) and each command's help. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "samc.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage;           /* options, one per line */
} cli_command;

static const cli_command commands[] = {
    {"segment", cmd_segment, "segment an image: SAM 2 point / box / mask prompts, SAM 3 text and exemplar boxes",
     "samc segment [-m|--model CKPT] [-c|--config NAME|FILE.json] -i|--image IMG -o|--out DIR\n"
     "             (-p|--point X,Y[,LABEL] ... | -b|--box X0,Y0,X1,Y1 ... | --mask-input FILE) [options]   (SAM 2)\n"
     "samc segment --model SAM3.pt [--vocab FILE] --image IMG --out DIR\n"
     "             (--text \"a dog\" | --box X0,Y0,X1,Y1[,neg] ...) [--threshold T] [options]     (SAM 3)\n"
     "samc segment --model SAM3.pt --vocab FILE --image IMG --out DIR --point ... [--box ...] [--inst]\n"
     "             (SAM 3's SAM 1 task, predict_inst: the SAM 2 prompts on sam3.pt's tracker heads)\n"
     "  -m, --model CKPT        .pt, .safetensors or a parity dump .h5 (its own config), SAM 2 or\n"
     "                          SAM 3 (detected); without --model: the bundled demo model and image\n"
     "  -c, --config NAME|FILE  preset (sam2.1_hiera_t, ...) or .json; default: detected (SAM 2),\n"
     "                          the released model (SAM 3)\n"
     "SAM 2 prompts:\n"
     "  -p, --point X,Y[,LABEL] a point prompt (label 1 foreground, 0 background); repeatable\n"
     "  -b, --box X0,Y0,X1,Y1   a box prompt (inside the image); repeated: batched boxes, one mask\n"
     "                          set per box (mask_B_K.png), as predict(box=(B, 4)); no --point then\n"
     "  --mask-input FILE       low-res logits (float32, S/4 x S/4: a low_res_masks.f32 of several\n"
     "                          masks gives the best one its result.json names) or a PNG of that size\n"
     "  --mask-index K          mask K of a --mask-input of several masks\n"
     "  --multimask             three candidate masks (the official default for one point)\n"
     "  --max-hole-area A, --max-sprinkle-area A   SAM2ImagePredictor post-processing\n"
     "SAM 3 prompts (every instance of the concept; Sam3Processor):\n"
     "  --text TEXT             the concept (longer than 32 tokens: cut as the official tokenizer does)\n"
     "  --box X0,Y0,X1,Y1[,neg] an exemplar box (inside the image, not empty; neg: a negative one); repeatable\n"
     "  --threshold T           confidence threshold in [0, 1] (default 0.5)\n"
     "  --vocab FILE            the tokenizer's bpe_simple_vocab_16e6.txt.gz (a dump: its own)\n"
     "SAM 3 clicks (predict_inst, a model with its tracker half: sam3.pt): --point, --box,\n"
     "  --mask-input, --multimask as for SAM 2; --inst makes a --box alone a SAM 1 box (else an exemplar)\n"
     "options:\n"
     "  --impl fast|ref|bf16    implementation (default fast)\n"
     "  --impl-override L=IMPL  implementation of one layer (samc info CKPT --layers)\n"
     "  -t, --threads N         threads (default: OMP_NUM_THREADS or all cores)\n"
     "  --allow-nonfinite       load weights that hold NaN/Inf\n"
     "  --rle coco|uncompressed the masks' RLE in result.json: coco_rle (pycocotools' string,\n"
     "                          the default) or rle (the counts)\n"
     "  -o, --out DIR           SAM 2: mask_K.png, overlay.png, result.json, low_res_masks.f32;\n"
     "                          SAM 3: mask_K.png per instance, overlay.png, result.json\n"},
    {"amg", cmd_amg, "automatic mask generator (SAM2AutomaticMaskGenerator): every object of an image",
     "samc amg [-m|--model CKPT [-c|--config NAME|FILE.json] -i|--image IMG] -o|--out DIR [options]\n"
     "  SAM2AutomaticMaskGenerator(model, ...).generate(image); without --model the bundled\n"
     "  demo model and image. Writes DIR/masks.json (the official records: segmentation,\n"
     "  area, bbox, predicted_iou, point_coords, stability_score, crop_box) and\n"
     "  DIR/overlay.png; with --output-mode binary_mask also DIR/mask_NNNN.png.\n"
     "options (official defaults in brackets):\n"
     "  --points-per-side N [32]            --points-per-batch N [64]\n"
     "  --pred-iou-thresh X [0.8]           --stability-score-thresh X [0.95]\n"
     "  --stability-score-offset X [1.0]    --mask-threshold X [0.0]\n"
     "  --box-nms-thresh X [0.7]            --crop-n-layers N [0]\n"
     "  --crop-nms-thresh X [0.7]           --crop-overlap-ratio X [0.3413]\n"
     "  --crop-n-points-downscale-factor N [1]\n"
     "  --min-mask-region-area N [0]        --output-mode coco_rle|uncompressed_rle|binary_mask\n"
     "                                      [coco_rle here; the official default binary_mask\n"
     "                                      writes PNGs and uncompressed counts]\n"
     "  --use-m2m                           --no-multimask (multimask_output=False)\n"
     "  --impl ref|fast [fast]  -t|--threads N  --allow-nonfinite  --quiet (no progress)\n"
     "exit status: 0 done, 2 usage or parameter error, 1 runtime error\n"},
    {"track", cmd_track, "track objects (SAM 2: clicked; SAM 3: every instance of a text) through a video",
     "samc track -m|--model CKPT [-c|--config NAME|FILE.json] -f|--frames DIR|VIDEO -o|--out DIR -p|--prompt SPEC ...\n"
     "samc track -m|--model SAM3.pt --vocab FILE -f|--frames DIR -o|--out DIR --text TEXT [--start N] ...\n"
     "  --text TEXT             SAM 3: the concept, detected on frame --start (default 0) and tracked\n"
     "                          with the official detector-tracker loop (objects come and go; ids stay)\n"
     "  --vocab FILE            SAM 3: the tokenizer's bpe_simple_vocab_16e6.txt.gz\n"
     "  -f, --frames DIR|VIDEO  numbered JPEG frames, or a video file (mp4, webm, mkv, mov, avi)\n"
     "  -p, --prompt FRAME:OBJ:point=X,Y[,L] a point on frame FRAME for object id OBJ (repeatable)\n"
     "  --prompt FRAME:OBJ:box=X0,Y0,X1,Y1   one box per frame and object\n"
     "  --prompt FRAME:OBJ:mask=PNG          a mask (nonzero = object)\n"
     "  --start N               first frame to propagate from (default: the first prompted)\n"
     "  --max-frames N          frames after the start (default: all)\n"
     "  --reverse               propagate backwards\n"
     "  --impl fast|ref|bf16    implementation (default fast)\n"
     "  -t, --threads N         threads\n"
     "  --allow-nonfinite       load weights that hold NaN/Inf\n"
     "  --rle coco|uncompressed the masks' RLE in track.json(l) (default coco: pycocotools' string)\n"
     "  -o, --out DIR           masks/<FRAME>_obj<ID>.png, overlay/<FRAME>.png, track.jsonl\n"
     "                          (one line per frame, written as each frame is done), track.json;\n"
     "                          Ctrl-C stops at the next frame, keeps the frames done and writes\n"
     "                          track.json with \"interrupted\": true (exit 130)\n"
     "  --out-video FILE        the overlay as a video (.mp4, .mkv, .webm, ...), frames in tracking order\n"
     "  --palette-png           also palette/<FRAME>.png: each pixel the id of its object (ids 1..255),\n"
     "                          DAVIS-style, as the official tools/vos_inference.py writes\n"},
    {"serve", cmd_serve, "an HTTP server: a JSON API and a web page for click-to-segment, concepts and video",
     "samc serve [-m|--model CKPT [-c|--config NAME|FILE.json]] [-m|--model SAM3.pt --vocab FILE] [options]\n"
     "  Loads the models (one SAM 2 and/or one SAM 3; without --model the bundled demo model),\n"
     "  then serves the page at http://HOST:PORT/ and the API under /v1 (docs/serve.md).\n"
     "  --host ADDR             address to listen on (default 127.0.0.1: this machine only)\n"
     "  -p, --port N            port (default 8080; 0: any free port)   --port-file FILE: write it\n"
     "  -w, --workers N         model workers, each with its own predictors (default 1)\n"
     "  -t, --threads N         threads per worker (default: cores / workers)\n"
     "  --impl fast|ref|bf16    implementation (default fast)\n"
     "  --cache-mb N            memory for uploaded images and their embeddings (default 2048)\n"
     "  --max-upload-mb N       largest image upload (default 64)   --max-image-mp N: pixels (50)\n"
     "  --max-video-mb N        largest video upload (default 512)  --max-video-frames N (3000)\n"
     "  --max-videos N          open video sessions (default 4)     --video-ttl S: idle close (1800)\n"
     "  --max-connections N     (default 64)   --queue N: requests waiting for a worker (64)\n"
     "  --timeout S             idle connection and queue wait (default 60)\n"
     "  --allow-nonfinite       load weights that hold NaN/Inf\n"},
#ifdef SAMC_WITH_PARITY /* the parity harness is built in (CMake SAMC_BUILD_PARITY) */
    {"parity", cmd_parity, "compare samc with a PyTorch parity dump, layer by layer",
     "samc parity DUMP.h5 [options]\n"
     "  --impl ref|fast|bf16    implementation (default: the registry's default, fast)\n"
     "  --impl-override L=IMPL  implementation of one layer (repeatable)\n"
     "  --isolated              each layer alone on the recorded inputs\n"
     "  --strict                no re-synchronised decisions\n"
     "  --tol X                 tolerance (default: the implementation's)\n"
     "  -j, --json FILE         the report as JSON\n"},
#endif
    {"info", cmd_info, "show the model family, detected config, key check, implementation and threads",
     "samc info [CKPT] [options]     (SAM 2 or SAM 3: .pt, .safetensors, a parity dump)\n"
     "  without CKPT: the system (the kernels' instruction-set level, bf16 kernel, threads)\n"
     "  and the implementations\n"
     "  -c, --config NAME|FILE  config instead of the detected one\n"
     "  --allow-nonfinite       do not fail on NaN/Inf weights\n"
     "  --impls                 the implementations, the plugins' too (CKPT optional)\n"
     "  --layers                the layer instances (names --impl-override takes)\n"
     "  --impl NAME             with --layers: which implementation serves each layer\n"
     "  --keys                  the state_dict keys the config implies (SAM 2)\n"},
    {"bench", cmd_bench, "time the image encoder, prompt -> masks and end to end",
     "samc bench [-c|--config NAME|FILE] [-m|--model CKPT] [--impl ref|fast|bf16|all] [-n|--runs N]\n"
     "           [--warmup N] [-t|--threads N] [--size 1024] [--image WxH] [--peak GFLOPS]\n"
     "           [--prompts N] [--layers] [--sgemm]   (random seeded weights without --model)\n"},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: samc [--version] [-v|--verbose] [-q|--quiet] <command> [options]\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`samc <command> --help` shows a command's options: --name VALUE or --name=VALUE,\n"
               "-x VALUE for the short ones.\n"
               "exit codes: 0 success, 1 runtime failure (files, model, output), 2 usage error,\n"
               "130 interrupted (Ctrl-C; SIGTERM 143): segment, amg and track stop at the next layer or\n"
               "frame and keep only complete outputs\n");
}

void cli_usage(const char *cmd, void *file)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, cmd))
            fprintf(file, "usage: %s", commands[i].usage);
}

static bool is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

/* -v/--verbose and -q/--quiet anywhere on the line apply to every command;
 * they are taken out before the command parses its own options. */
static int take_verbosity(int argc, char **argv)
{
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")))
            cli_verbosity = 2;
        else if (i > 0 && (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")))
            cli_verbosity = 0;
        else
            argv[n++] = argv[i];
    }
    samc_log_set_level(cli_verbosity >= 2 ? SAMC_LOG_INFO : cli_verbosity == 0 ? SAMC_LOG_ERROR : SAMC_LOG_WARN);
    return n;
}

int main(int argc, char **argv)
{
    cli_install_signal_cleanup(); /* an interrupted run leaves no temporaries */
    argc = take_verbosity(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (is_help(argv[1])) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("samc %s (default implementation %s)\n%s\n", samc_version(), samc_default_impl(), samc_system_info());
        return CLI_EXIT_OK;
    }
    for (int i = 0; i < N_COMMANDS; i++) {
        if (strcmp(argv[1], commands[i].name))
            continue;
        for (int k = 2; k < argc; k++)
            if (is_help(argv[k])) {
                cli_usage(commands[i].name, stdout);
                return CLI_EXIT_OK;
            }
        return commands[i].run(argc - 1, argv + 1);
    }
#ifndef SAMC_WITH_PARITY
    if (!strcmp(argv[1], "parity")) {
        fprintf(stderr, "samc: this samc was built without the parity harness (CMake -DSAMC_BUILD_PARITY=OFF)\n");
        return CLI_EXIT_USAGE;
    }
#endif
    fprintf(stderr, "samc: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
