/* SPDX-License-Identifier: Apache-2.0 */
/* dump_install.c - installs the HDF5 dump reader (dump_reader.h) in the
 * library when the program starts: every program that links the parity
 * harness (CMake's samc_parity object library: its objects are always
 * linked, so this runs) loads dumps with samc_model_load like checkpoints. */
#include "parity/dump_reader.h"

static const samc_dump_reader reader = {samc__dump_open_weights, samc__dump_read_meta};

__attribute__((constructor)) static void install(void) { samc_dump_reader_install(&reader); }
