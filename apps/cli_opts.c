/* SPDX-License-Identifier: Apache-2.0 */
/* cli_opts.c - every command's options through getopt_long (cli.h,
 * cli_parser): long options as --name VALUE or --name=VALUE, short ones as
 * -x VALUE or -xVALUE, positional arguments anywhere, unambiguous prefixes
 * of long names, and one kind of message per mistake: an unknown option
 * with the closest known name ("did you mean"), a missing value, a value
 * given to a flag. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/base/error.h"

void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv, const cli_option *opts, int n)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd, p->argc = argc, p->argv = argv, p->opts = opts;
    p->n = n < CLI_MAX_OPTIONS ? n : CLI_MAX_OPTIONS;
    /* "+": stop at nothing (positionals are collected by permutation, GNU);
     * ":" first: a missing value is told apart from an unknown option */
    size_t k = 0;
    p->shorts[k++] = ':';
    for (int i = 0; i < p->n; i++) {
        p->longs[i] = (struct option){opts[i].name, opts[i].value ? required_argument : no_argument, NULL, 256 + i};
        if (opts[i].short_name && k + 3 < sizeof p->shorts) {
            p->shorts[k++] = opts[i].short_name;
            if (opts[i].value)
                p->shorts[k++] = ':';
        }
    }
    p->shorts[k] = '\0';
    optind = 0; /* a fresh scan (glibc: 0 re-initialises getopt's state) */
    opterr = 0;
}

static int by_short(const cli_parser *p, int c)
{
    for (int i = 0; i < p->n; i++)
        if (p->opts[i].short_name == c)
            return i;
    return -1;
}

/* Levenshtein distance of a and b[0..nb), capped (long names only). */
static int distance(const char *a, const char *b, size_t nb)
{
    enum { MAXL = 64 };
    const size_t na = strlen(a);
    if (na >= MAXL || nb >= MAXL)
        return MAXL;
    int row[MAXL + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            const int up = row[j];
            const int sub = diag + (a[i - 1] != b[j - 1]);
            int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[nb];
}

/* The known long option closest to `arg` ("--thredas=2", "-threads"), or
 * NULL when none is close. */
static const char *closest(const cli_parser *p, const char *arg)
{
    while (*arg == '-')
        arg++;
    const size_t n = strcspn(arg, "=");
    const char *best = NULL;
    int bd = n / 3 > 2 ? (int)(n / 3) + 1 : 3; /* at most 2 edits, or a third of the name */
    for (int i = 0; i < p->n; i++) {
        const int d = distance(p->opts[i].name, arg, n);
        if (d < bd)
            bd = d, best = p->opts[i].name;
    }
    return best;
}

static samc_status unknown(const cli_parser *p, const char *arg, samc_error *err)
{
    const char *near = closest(p, arg);
    char hint[96] = "";
    if (near)
        snprintf(hint, sizeof hint, " (did you mean '--%s'?)", near);
    return samc_fail(err, SAMC_ERR_ARG, "unknown option '%s'%s; samc %s --help lists them", arg, hint, p->cmd);
}

static samc_status needs_value(const cli_option *o, samc_error *err)
{
    return samc_fail(err, SAMC_ERR_ARG, "option '--%s' needs a value: --%s %s", o->name, o->name, o->value);
}

int cli_next(cli_parser *p, const char **value, samc_error *err)
{
    *value = NULL;
    int li = -1;
    const int c = getopt_long(p->argc, p->argv, p->shorts, p->longs, &li);
    if (c == -1) {
        p->first_positional = optind;
        return -1;
    }
    const char *arg = p->argv[optind - 1] ? p->argv[optind - 1] : "";
    if (c >= 256) {
        *value = optarg;
        return c - 256;
    }
    if (c == ':') { /* a known option without its value */
        const int i = optopt >= 256 ? optopt - 256 : by_short(p, optopt);
        if (i >= 0)
            needs_value(&p->opts[i], err);
        else
            samc_fail(err, SAMC_ERR_ARG, "option '%s' needs a value", arg);
        return -2;
    }
    if (c == '?') {
        if (optopt >= 256) /* --flag=value */
            samc_fail(err, SAMC_ERR_ARG, "option '--%s' takes no value (got '%s')", p->opts[optopt - 256].name, arg);
        else if (optopt)
            unknown(p, (char[]){'-', (char)optopt, '\0'}, err);
        else
            unknown(p, arg, err);
        return -2;
    }
    const int i = by_short(p, c);
    if (i < 0) {
        samc_fail(err, SAMC_ERR_INTERNAL, "option table of samc %s: -%c", p->cmd, c);
        return -2;
    }
    *value = optarg;
    return i;
}
