/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_features.c - what the CPU we run on can do, asked once (CPUID and
 * XGETBV; aarch64: the kernel's HWCAP), for the kernels chosen at run time:
 * the instruction-set level of fast/isa/ (isa.h: x86-64 v2, v3, v4; NEON)
 * and the bf16 GEMM (AVX512_BF16's vdpbf16ps, AMX-BF16 tiles). Independent
 * of the compiler's target flags: every build has every level. */
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "fast.h"
#include "isa.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define SAMC_X86 1

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

enum { F_AVX512 = 1, F_AVX512BF16 = 2, F_AMXBF16 = 4, F_AMD = 8, F_V3 = 16, F_V4 = 32, F_NEONBF16 = 64 };

#define BIT(x, n) (((x) >> (n)) & 1u)

static int detect(void)
{
    int f = 0;
#if defined(__aarch64__) && defined(__linux__)
    if (getauxval(AT_HWCAP2) & HWCAP2_BF16)
        f |= F_NEONBF16;
#endif
#ifdef SAMC_X86
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u)
        f |= F_AMD; /* "AuthenticAMD" */
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
        return f;
    /* x86-64-v3 beyond v2: FMA, MOVBE, AVX, F16C (leaf 1), AVX2, BMI1, BMI2
     * (leaf 7), LZCNT (leaf 0x80000001), the YMM state enabled by the OS */
    const unsigned c1 = c;
    const uint64_t xcr0 = xgetbv0();
    const int os_ymm = (xcr0 & 0x6) == 0x6;
    const int os_zmm = (xcr0 & 0xe6) == 0xe6; /* SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
    unsigned e81 = 0;
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d))
        e81 = c;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return f;
    if (os_ymm && BIT(c1, 12) && BIT(c1, 22) && BIT(c1, 28) && BIT(c1, 29) && BIT(b, 5) && BIT(b, 3) && BIT(b, 8) &&
        BIT(e81, 5))
        f |= F_V3;
    /* v4: AVX512 F, DQ, CD, BW, VL */
    if ((f & F_V3) && os_zmm && BIT(b, 16) && BIT(b, 17) && BIT(b, 28) && BIT(b, 30) && BIT(b, 31))
        f |= F_V4;
    const int avx512 = os_zmm && (b & (1u << 16)) && (b & (1u << 30)) && (b & (1u << 31)); /* F, BW, VL */
    const int amx = (d & (1u << 24)) && (d & (1u << 22)); /* AMX-TILE, AMX-BF16 */
    if (avx512)
        f |= F_AVX512;
    if (avx512 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)))
        f |= F_AVX512BF16;
    if (amx && (xcr0 & (3u << 17)) == (3u << 17)) {
        /* Linux hands out the 8 KiB tile state only on request (once per
         * process); without the permission the first tile load faults. */
#if defined(SYS_arch_prctl)
        if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0)
            f |= F_AMXBF16;
#endif
    }
#endif
    return f;
}

/* decide() once per process (benign race: every thread decides the same). */
static int once(int *cached, int (*decide)(void))
{
    int v;
#pragma omp atomic read
    v = *cached;
    if (v < 0) {
        v = decide();
#pragma omp atomic write
        *cached = v;
    }
    return v;
}

static int features(void)
{
    static int cached = -1;
    return once(&cached, detect);
}

/* ---- the instruction-set level of fast/isa/ ------------------------------ */

static int cpu_level(void)
{
#if defined(SAMC_X86)
    const int f = features();
    return f & F_V4 ? SAMC_ISA_V4 : f & F_V3 ? SAMC_ISA_V3 : SAMC_ISA_V2;
#elif defined(__aarch64__)
    return SAMC_ISA_NEON;
#else
    return SAMC_ISA_SCALAR;
#endif
}

int samc__fast_isa_cpu_level(void) { return cpu_level(); }

const fast_isa *samc__fast_isa_table(int level)
{
    if (level > cpu_level())
        return NULL;
    switch (level) {
#if defined(SAMC_X86)
    case SAMC_ISA_V2: return &samc__fast_isa_v2;
    case SAMC_ISA_V3: return &samc__fast_isa_v3;
    case SAMC_ISA_V4: return &samc__fast_isa_v4;
#elif defined(__aarch64__)
    case SAMC_ISA_NEON: return &samc__fast_isa_neon;
#else
    case SAMC_ISA_SCALAR: return &samc__fast_isa_scalar;
#endif
    default: return NULL;
    }
}

/* The CPU's best level, capped by SAMC_ISA=v2|v3|v4 (never raised). */
static int decide_level(void)
{
    const int cpu = cpu_level();
    const char *want = getenv("SAMC_ISA");
    if (!want || !*want)
        return cpu;
    int w = -1;
    if (!strcmp(want, "v2"))
        w = SAMC_ISA_V2;
    else if (!strcmp(want, "v3"))
        w = SAMC_ISA_V3;
    else if (!strcmp(want, "v4"))
        w = SAMC_ISA_V4;
    else if (!strcmp(want, "neon"))
        w = SAMC_ISA_NEON;
    if (w < 0 || !samc__fast_isa_table(w < cpu ? w : cpu) || (cpu == SAMC_ISA_NEON) != (w == SAMC_ISA_NEON)) {
        samc__log(SAMC_LOG_WARN, "SAMC_ISA=%s is not a level of this machine (%s): using %s", want,
#if defined(SAMC_X86)
                  "v2, v3, v4",
#else
                  "neon",
#endif
                  samc__fast_isa_table(cpu)->name);
        return cpu;
    }
    if (w > cpu) {
        samc__log(SAMC_LOG_WARN, "SAMC_ISA=%s: this CPU runs at most %s; using that", want,
                  samc__fast_isa_table(cpu)->name);
        return cpu;
    }
    return w;
}

static int level(void)
{
    static int cached = -1;
    return once(&cached, decide_level);
}

const fast_isa *samc__fast_isa(void) { return samc__fast_isa_table(level()); }

/* ---- the bf16 GEMM's kernel -------------------------------------------------- */

/* The bf16 features in force: on x86, a level below v4 (SAMC_ISA) stands
 * for a CPU without AVX-512, so without AVX512_BF16 or AMX either. */
static int bf16_features(void)
{
#if defined(SAMC_X86)
    return level() >= SAMC_ISA_V4 ? features() : 0;
#else
    return features();
#endif
}

static int decide_bf16_kernel(void)
{
    const int f = bf16_features();
    int k = f & F_AMXBF16 ? FAST_KERN_AMX : f & F_AVX512BF16 ? FAST_KERN_AVX512BF16
          : f & F_NEONBF16 ? FAST_KERN_NEON_BF16 : FAST_KERN_FALLBACK;
    /* SAMC_BF16_KERNEL caps the choice (benchmarks, A/B tests) */
    const char *cap = getenv("SAMC_BF16_KERNEL");
    if (cap && !strcmp(cap, "fallback"))
        k = FAST_KERN_FALLBACK;
    else if (cap && !strcmp(cap, "avx512") && k > FAST_KERN_AVX512BF16)
        k = FAST_KERN_AVX512BF16;
    return k;
}

int samc__fast_bf16_kernel(void)
{
    static int cached = -1;
    return once(&cached, decide_bf16_kernel);
}

/* vdpbf16ps doubles the fp32 FMA rate only where it issues on two ports
 * (AMD Zen 4/5); Intel's issues on one, and the conversions to bf16 then
 * make the bf16 attention slower than fp32's: on Sapphire Rapids (AMX), t's
 * global attention took 30 ms in bf16 against 17 in fp32 at 16 threads
 * (docs/fast.md). The GEMMs take AMX tiles there; the attention stays fp32
 * until it has an AMX path. SAMC_BF16_ATTENTION=bf16|fp32 overrides (A/B). */
static int decide_bf16_attention(void)
{
    const char *o = getenv("SAMC_BF16_ATTENTION");
    if (o && !strcmp(o, "bf16"))
        return 1;
    if (o && !strcmp(o, "fp32"))
        return 0;
    return (features() & F_AMD) && samc__fast_bf16_kernel() == FAST_KERN_AVX512BF16;
}

int samc__fast_bf16_attention(void)
{
    static int cached = -1;
    return once(&cached, decide_bf16_attention);
}

int samc__fast_cpu_has_kernel(int kern)
{
    const int f = bf16_features();
    switch (kern) {
    case FAST_KERN_FALLBACK: return 1;
    case FAST_KERN_AVX512BF16: return (f & F_AVX512BF16) != 0;
    case FAST_KERN_AMX: return (f & F_AMXBF16) != 0;
    case FAST_KERN_AMX_EMU: return 1;
    case FAST_KERN_NEON_BF16: return (f & F_NEONBF16) != 0;
    default: return 0;
    }
}

const char *samc__fast_bf16_kernel_name(int kern)
{
    switch (kern) {
    case FAST_KERN_AVX512BF16: return "avx512_bf16 (vdpbf16ps)";
    case FAST_KERN_AMX: return "amx_bf16 (tdpbf16ps)";
    case FAST_KERN_AMX_EMU: return "amx_bf16 emulated in C (tests)";
    case FAST_KERN_NEON_BF16: return "neon_bf16 (bfdot)";
    default: return "fallback (fp32 kernel on bf16-rounded values)";
    }
}
