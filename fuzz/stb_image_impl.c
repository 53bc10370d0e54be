/* SPDX-License-Identifier: Apache-2.0 */
/* stb_image_impl.c - stb_image compiled from the Debian header into the
 * image harness of the SAMC_FUZZ build, so its decoders are instrumented
 * (ASan, UBSan, coverage). These definitions take precedence over the
 * uninstrumented libstb that libsamc links. Default stb options, as Debian
 * builds libstb. */
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
