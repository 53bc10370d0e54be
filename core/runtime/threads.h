/* SPDX-License-Identifier: Apache-2.0 */
/* threads.h - how many threads a request gets (core/runtime/threads.c). */
#ifndef SAMC_CORE_THREADS_H
#define SAMC_CORE_THREADS_H

/* The threads a request of `n` gets: n > 0 as asked, 0 OpenMP's default
 * (OMP_NUM_THREADS), both capped at SAMC_MAX_THREADS (libgomp crashes when
 * asked for 100000). */
int samc__threads_resolve(int n);

#endif
