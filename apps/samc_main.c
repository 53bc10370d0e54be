/* samc_main.c - the `samc` command: segment, parity, info. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: samc <command> [options]\n"
            "\n"
            "commands:\n"
            "  segment   segment an image from point / box / mask prompts\n"
            "            samc segment [--model CKPT] [--config NAME|FILE.json] --image IMG\n"
            "                         (--point X,Y[,LABEL] ... | --box X0,Y0,X1,Y1 | --mask-input FILE)\n"
            "                         [--multimask] [--impl ref|fast] [--impl-override LAYER=IMPL]\n"
            "                         [--max-hole-area A] [--max-sprinkle-area A] [--threads N]\n"
            "                         [--allow-nonfinite] --out DIR\n"
            "            without --model: the bundled demo model and image\n"
            "  amg       automatic mask generator (SAM2AutomaticMaskGenerator): every object of an image\n"
            "            samc amg [--model CKPT --image IMG] --out DIR [--points-per-side N ...]  (samc amg --help)\n"
            "  track     track objects through a video (a directory of numbered JPEG frames)\n"
            "            samc track --model CKPT [--config NAME|FILE.json] --frames DIR\n"
            "                       --prompt FRAME:OBJ:point=X,Y[,L] | FRAME:OBJ:box=X0,Y0,X1,Y1 |\n"
            "                                FRAME:OBJ:mask=PNG ...  [--reverse] [--start N] [--max-frames N]\n"
            "                       [--impl ref|fast] [--allow-nonfinite] --out DIR\n"
            "  parity    compare samc with a PyTorch parity dump, layer by layer\n"
            "            samc parity DUMP.h5 [--impl ref|fast] [--impl-override LAYER=IMPL ...]\n"
            "                        [--isolated] [--tol X] [--json FILE]\n"
            "  info      show the detected config and key check of a checkpoint\n"
            "            samc info CKPT [--config NAME|FILE.json] [--allow-nonfinite]\n"
            "  bench     time the image encoder, prompt -> masks and end to end (ref and/or fast)\n"
            "            samc bench [--config NAME|FILE] [--model CKPT] [--impl ref|fast|both] [--runs N]\n"
            "                       [--warmup N] [--threads N] [--size 1024] [--image WxH] [--peak GFLOPS]\n"
            "                       [--prompts N] [--sgemm]   (random seeded weights without --model)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "segment"))
        return cmd_segment(argc - 1, argv + 1);
    if (!strcmp(argv[1], "amg"))
        return cmd_amg(argc - 1, argv + 1);
    if (!strcmp(argv[1], "parity"))
        return cmd_parity(argc - 1, argv + 1);
    if (!strcmp(argv[1], "track"))
        return cmd_track(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bench"))
        return cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "samc: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
