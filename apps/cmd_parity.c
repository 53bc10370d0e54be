/* cmd_parity.c - `samc parity DUMP.h5 ...` */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parity/parity.h"

int cmd_parity(int argc, char **argv)
{
    samc_parity_opts o = {.impl = NULL}; /* the registry's default implementation */
    const char *dump = NULL, *json = NULL;
    const char **ovr = calloc((size_t)argc, sizeof *ovr);
    samc_error err = {0};
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool has_val = i + 1 < argc;
        if (!strcmp(a, "--impl") && has_val) {
            o.impl = argv[++i];
        } else if (!strcmp(a, "--impl-override") && has_val) {
            ovr[o.n_overrides++] = argv[++i];
        } else if (!strcmp(a, "--isolated")) {
            o.isolated = true;
        } else if (!strcmp(a, "--strict")) {
            o.strict = true;
        } else if (!strcmp(a, "--tol") && has_val) {
            char *end;
            o.tol = strtod(argv[++i], &end);
            if (*end || !(o.tol > 0)) {
                fprintf(stderr, "samc parity: --tol '%s': expected a positive number\n", argv[i]);
                goto done;
            }
        } else if (!strcmp(a, "--json") && has_val) {
            json = argv[++i];
        } else if (a[0] == '-' || dump) {
            fprintf(stderr, "samc parity: unexpected argument '%s'\n", a);
            goto done;
        } else {
            dump = a;
        }
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
