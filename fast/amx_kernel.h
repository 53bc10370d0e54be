/* SPDX-License-Identifier: Apache-2.0 */
/* amx_kernel.h - the AMX-BF16 32 x 32 tile product, written once and
 * compiled twice by gemm_bf16.c: with the real tile instructions
 * (AMX_NAME(x) = x##_hw) and with a plain C model of them (x##_emu), which
 * is how the unit tests check this code on CPUs without AMX (this project's
 * machines have none: the hardware variant is UNTESTED on hardware).
 *
 * Tiles: 0-3 accumulators C (16 rows x 16 fp32), 4-5 A (16 rows x 32 bf16
 * of the row-major bf16 copy of A), 6-7 B (16 k-pairs x 16 columns x 2
 * bf16), read straight from the packed weight panel, whose k-pair rows are
 * 32 columns = 128 bytes apart: B tile 6 is columns 0-15 of the panel, 7
 * columns 16-31. ctmp receives the 32 x 32 fp32 result (rows 128 bytes
 * apart). kcb is a multiple of 32 (the AMX layout pads K to 32). */
static AMX_ATTR void AMX_NAME(amx_tile_32x32)(int kcb, const uint16_t *Ab, int64_t ldab, const uint16_t *Bp,
                                              float *ctmp)
{
    TZERO(0);
    TZERO(1);
    TZERO(2);
    TZERO(3);
    for (int k = 0; k < kcb; k += 32) {
        TLOAD(4, Ab + k, ldab * 2);
        TLOAD(5, Ab + 16 * ldab + k, ldab * 2);
        TLOAD(6, Bp + (int64_t)(k / 2) * 64, 128);
        TLOAD(7, Bp + (int64_t)(k / 2) * 64 + 32, 128);
        TDP(0, 4, 6);
        TDP(1, 4, 7);
        TDP(2, 5, 6);
        TDP(3, 5, 7);
    }
    TSTORE(0, ctmp, 128);
    TSTORE(1, ctmp + 16, 128);
    TSTORE(2, ctmp + 16 * 32, 128);
    TSTORE(3, ctmp + 16 * 32 + 16, 128);
}
