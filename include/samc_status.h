/* SPDX-License-Identifier: Apache-2.0 */
/* samc_status.h - status codes and the error record every samc call fills.
 *
 * Every fallible function returns a samc_status and, when given a non-NULL
 * samc_error, writes a message that names the file, key or argument at fault
 * and what was expected. Messages are complete sentences without a trailing
 * newline, e.g.
 *   "ckpt.pt: key 'image_encoder.trunk.pos_embed': expected shape (1,96,7,7), got (1,96,14,14)"
 */
#ifndef SAMC_STATUS_H
#define SAMC_STATUS_H

/* SAMC_API marks the public functions: libsamc is compiled with hidden
 * visibility, so these are the only symbols the shared library exports
 * (tests/libsamc.symbols lists them; CTest `abi` checks the list). */
#ifndef SAMC_API
#if defined(__GNUC__) || defined(__clang__)
#define SAMC_API __attribute__((visibility("default")))
#else
#define SAMC_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum samc_status {
    SAMC_OK = 0,
    SAMC_ERR_IO,          /* missing, unreadable or truncated file */
    SAMC_ERR_FORMAT,      /* file content does not follow its format */
    SAMC_ERR_KEY,         /* a required key/tensor/dataset is missing */
    SAMC_ERR_SHAPE,       /* a tensor has the wrong shape */
    SAMC_ERR_DTYPE,       /* unsupported or mismatched element type */
    SAMC_ERR_ARG,         /* bad argument from the caller (prompt out of range, ...) */
    SAMC_ERR_NOMEM,       /* allocation failed or a size is absurd */
    SAMC_ERR_UNSUPPORTED, /* valid input that samc does not handle (yet) */
    SAMC_ERR_SECURITY,    /* input tries something forbidden (pickle global, ...) */
    SAMC_ERR_PARITY,      /* a parity comparison failed */
    SAMC_ERR_INTERNAL,
    SAMC_ERR_ABORTED      /* the caller's abort callback asked to stop (samc.h, samc_abort_fn) */
} samc_status;

#define SAMC_ERROR_MSG_MAX 1024

typedef struct samc_error {
    samc_status status;
    char msg[SAMC_ERROR_MSG_MAX];
} samc_error;

/* Short name of a status ("io", "format", ...). */
SAMC_API const char *samc_status_name(samc_status st);

#ifdef __cplusplus
}
#endif
#endif
