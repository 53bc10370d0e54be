/* cpu_features.c - what the CPU we run on can do, asked once (CPUID and
 * XGETBV), for the kernels chosen at run time (the bf16 GEMM: AVX512_BF16's
 * vdpbf16ps, AMX-BF16 tiles). Independent of the compiler's target flags:
 * a portable build (-DSAMC_NATIVE=OFF) still finds and uses them. */
#include <stdlib.h>
#include <string.h>

#include "fast.h"

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

enum { F_AVX512 = 1, F_AVX512BF16 = 2, F_AMXBF16 = 4, F_AMD = 8 };

static int detect(void)
{
    int f = 0;
#ifdef SAMC_X86
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u)
        f |= F_AMD; /* "AuthenticAMD" */
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
        return f;
    const uint64_t xcr0 = xgetbv0();
    const int os_zmm = (xcr0 & 0xe6) == 0xe6; /* SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return f;
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

static int decide_bf16_kernel(void)
{
    const int f = features();
    int k = f & F_AMXBF16 ? FAST_KERN_AMX : f & F_AVX512BF16 ? FAST_KERN_AVX512BF16 : FAST_KERN_FALLBACK;
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
    const int f = features();
    switch (kern) {
    case FAST_KERN_FALLBACK: return 1;
    case FAST_KERN_AVX512BF16: return (f & F_AVX512BF16) != 0;
    case FAST_KERN_AMX: return (f & F_AMXBF16) != 0;
    case FAST_KERN_AMX_EMU: return 1;
    default: return 0;
    }
}

const char *samc__fast_bf16_kernel_name(int kern)
{
    switch (kern) {
    case FAST_KERN_AVX512BF16: return "avx512_bf16 (vdpbf16ps)";
    case FAST_KERN_AMX: return "amx_bf16 (tdpbf16ps)";
    case FAST_KERN_AMX_EMU: return "amx_bf16 emulated in C (tests)";
    default: return "fallback (fp32 kernel on bf16-rounded values)";
    }
}
