/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_parity.c - `samc parity DUMP.h5 ...` */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parity/parity.h"

enum { O_IMPL, O_OVERRIDE, O_ISOLATED, O_STRICT, O_TOL, O_JSON };
static const cli_option parity_options[] = {
    [O_IMPL] = {"impl", 0, "NAME"},     [O_OVERRIDE] = {"impl-override", 0, "LAYER=IMPL"},
    [O_ISOLATED] = {"isolated", 0, NULL}, [O_STRICT] = {"strict", 0, NULL},
    [O_TOL] = {"tol", 0, "X"},          [O_JSON] = {"json", 'j', "FILE"},
};

int cmd_parity(int argc, char **argv)
{
    samc_parity_opts o = {.impl = NULL}; /* the registry's default implementation */
    const char *dump = NULL, *json = NULL;
    const char **ovr = calloc((size_t)argc, sizeof *ovr);
    samc_error err = {0};
    int rc = 2;
    cli_parser cp;
    cli_parser_init(&cp, "parity", argc, argv, parity_options, sizeof parity_options / sizeof parity_options[0]);
    const char *v;
    for (int k; (k = cli_next(&cp, &v, &err)) != -1;) {
        char *end;
        switch (k) {
        case -2: fprintf(stderr, "samc parity: %s\n", err.msg); goto done;
        case O_IMPL: o.impl = v; break;
        case O_OVERRIDE: ovr[o.n_overrides++] = v; break;
        case O_ISOLATED: o.isolated = true; break;
        case O_STRICT: o.strict = true; break;
        case O_JSON: json = v; break;
        case O_TOL:
            o.tol = strtod(v, &end);
            if (*end || !(o.tol > 0)) {
                fprintf(stderr, "samc parity: --tol '%s': expected a positive number\n", v);
                goto done;
            }
            break;
        default: break;
        }
    }
    if (cp.first_positional < argc)
        dump = argv[cp.first_positional];
    if (cp.first_positional + 1 < argc) {
        fprintf(stderr, "samc parity: unexpected argument '%s' (one dump per run)\n", argv[cp.first_positional + 1]);
        goto done;
    }
    if (!dump) {
        fprintf(stderr, "samc parity: no dump given (samc parity DUMP.h5 [options])\n");
        goto done;
    }
    o.overrides = ovr;
    samc_parity_report rep;
    samc_status st = samc_parity_run(dump, &o, &rep, &err);
    if (st) {
        fprintf(stderr, "samc parity: %s\n", err.msg);
        rc = cli_exit_code(st);
        goto done;
    }
    samc_parity_print(&rep, stdout);
    rc = rep.n_fail ? 1 : 0;
    if (json && samc_parity_write_json(&rep, json, &err)) {
        fprintf(stderr, "samc parity: %s\n", err.msg);
        rc = CLI_EXIT_RUNTIME;
    }
    samc_parity_report_free(&rep);
done:
    free(ovr);
    return rc;
}
