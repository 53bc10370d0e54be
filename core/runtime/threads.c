/* SPDX-License-Identifier: Apache-2.0 */
/* threads.c - see threads.h. */
#include "core/runtime/threads.h"

#include <omp.h>

#include "samc.h" /* SAMC_MAX_THREADS */


int samc__threads_resolve(int n)
{
    if (n <= 0)
        n = omp_get_max_threads();
    return n < 1 ? 1 : n > SAMC_MAX_THREADS ? SAMC_MAX_THREADS : n;
}
