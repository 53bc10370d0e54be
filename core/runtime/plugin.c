/* SPDX-License-Identifier: Apache-2.0 */
/* plugin.c - loading implementations from plugins (core/runtime/plugin.h). */
#define _GNU_SOURCE /* dladdr */
#include "core/runtime/plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/error.h"
#include "core/models/tracker/prompt_points.h"
#include "core/nn/position_encoding.h"

static const samc_plugin_api api = {
    .abi = SAMC_PLUGIN_ABI,
    .impl_register = samc_impl_register,
    .impl_unregister = samc_impl_unregister,
    .hiera_geometry = samc_hiera_block_geometry,
    .sine_pe_fill = samc_sine_pe_fill,
    .fourier_pe = samc_fourier_pe,
    .prompt_sparse_token = samc_prompt_sparse_token,
    .bilinear_taps = samc_bilinear_taps,
    .aa_taps_make = samc_aa_taps_make,
    .aa_taps_free = samc_aa_taps_free,
};

/* What happened to each plugin this process tried (a failure is final: the
 * message is given again on every later use). */
#define MAX_PLUGINS 4
static struct {
    char lib[32];
    samc_status st;
    char msg[SAMC_ERROR_MSG_MAX];
} tried[MAX_PLUGINS];
static int n_tried;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The directory of the object that holds this code (libsamc.so, or the
 * program libsamc.a was linked into). */
static void own_dir(char *dir, size_t n)
{
    Dl_info info;
    dir[0] = '\0';
    char *real = NULL;
    if (dladdr((void *)samc__plugin_load, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
        real = realpath(info.dli_fname, NULL);
    if (!real)
        real = realpath("/proc/self/exe", NULL);
    if (real && strrchr(real, '/')) {
        *strrchr(real, '/') = '\0';
        snprintf(dir, n, "%s", real);
    }
    free(real);
}

/* dlopen `file`; on failure append dlerror() to the account in `why`. */
static void *try_open(const char *file, char *why, size_t n)
{
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        size_t used = strlen(why);
        snprintf(why + used, n - used, "%s%s", used ? "; " : "", e ? e : file);
    }
    return h;
}

static void *find_and_open(const char *lib, char *where, size_t nwhere, char *why, size_t nwhy)
{
    char file[4096], dir[4096], name[64];
    snprintf(name, sizeof name, "lib%s.so", lib);
    const char *env = getenv("SAMC_PLUGIN_PATH");
    void *h = NULL;
    if (env && *env) {
        char *paths = strdup(env);
        for (char *save = NULL, *d = paths ? strtok_r(paths, ":", &save) : NULL; d && !h; d = strtok_r(NULL, ":", &save)) {
            snprintf(file, sizeof file, "%s/%s", d, name);
            if (access(file, F_OK) == 0)
                h = try_open(file, why, nwhy);
        }
        free(paths);
    }
    own_dir(dir, sizeof dir);
    if (!h && dir[0]) {
        snprintf(file, sizeof file, "%s/%s", dir, name);
        if (access(file, F_OK) == 0)
            h = try_open(file, why, nwhy);
    }
    if (!h)
        h = try_open(name, why, nwhy);
    snprintf(where, nwhere, "%s (looked in SAMC_PLUGIN_PATH=%s, %s, the loader's path)", name, env ? env : "",
             dir[0] ? dir : "?");
    return h;
}

static samc_status load_locked(const char *lib, samc_error *err)
{
    char where[8400], why[2048] = "";
    void *h = find_and_open(lib, where, sizeof where, why, sizeof why);
    if (!h)
        return samc_fail(err, SAMC_ERR_UNSUPPORTED,
                         "cannot load the plugin %s: %s. Build it with cmake -DSAMC_CUDA=ON (docs/gpu.md) and put it "
                         "next to libsamc or in SAMC_PLUGIN_PATH",
                         where, why);
    samc_plugin_register_fn *entry = (samc_plugin_register_fn *)dlsym(h, SAMC_PLUGIN_ENTRY);
    if (!entry)
        return samc_fail(err, SAMC_ERR_FORMAT, "the plugin %s has no entry point %s", where, SAMC_PLUGIN_ENTRY);
    /* The plugin keeps the pointer for the life of the process (it calls the
     * shared numerics through it at every run): static, filled under the
     * lock of samc__plugin_load. A stack copy here was a dangling pointer
     * that the first device run dereferenced as NULL. */
    static samc_plugin_api a;
    a = api;
    a.layout = samc_plugin_layout();
    samc_status st = entry(&a, err);
    if (st)
        samc_error_prefix(err, "the plugin %s", where);
    return st; /* never dlclose: its rows stay registered for the process */
}

samc_status samc__plugin_load(const char *lib, samc_error *err)
{
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < n_tried && strcmp(tried[i].lib, lib))
        i++;
    samc_status st;
    if (i < n_tried) {
        st = tried[i].st;
        if (st)
            samc_fail(err, st, "%s", tried[i].msg);
    } else {
        samc_error e = {0};
        st = load_locked(lib, &e);
        if (n_tried < MAX_PLUGINS) {
            snprintf(tried[n_tried].lib, sizeof tried[n_tried].lib, "%s", lib);
            tried[n_tried].st = st;
            snprintf(tried[n_tried].msg, sizeof tried[n_tried].msg, "%s", e.msg);
            n_tried++;
        }
        if (st)
            samc_fail(err, st, "%s", e.msg);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

const samc_impl *samc_impl_lookup(const char *name, const char *what, samc_status *st, samc_error *err)
{
    const samc_impl *impl = samc_impl_find(name);
    const char *lib = impl ? NULL : samc__plugin_of(name);
    char names[160];
    if (!impl && lib) {
        if ((*st = samc__plugin_load(lib, err))) {
            samc_error_prefix(err, "%s: implementation '%s'", what, name);
            return NULL;
        }
        impl = samc_impl_find(name);
        if (!impl) {
            *st = samc_fail(err, SAMC_ERR_INTERNAL, "%s: the plugin %s was loaded but registered no implementation '%s'",
                            what, lib, name);
            return NULL;
        }
    }
    if (!impl)
        *st = samc_fail(err, SAMC_ERR_ARG, "%s: unknown implementation '%s' (known: %s)", what, name ? name : "",
                        samc_impl_names(names, sizeof names));
    return impl;
}
