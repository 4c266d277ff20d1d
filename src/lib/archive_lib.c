/* archive_lib.c - opens libarchive on first use (archive_lib.h). */
#include "archive_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

/* tests/unit/test_archive_missing.c builds this file with a name that
 * does not exist, to see what happens without the library */
#ifndef CP_ARCHIVE_SONAME
#define CP_ARCHIVE_SONAME CULPRIT_LIBARCHIVE_SONAME
#endif

#define CP_ARCHIVE_DEFINE(name) __typeof__(name) *sym_##name;
CP_ARCHIVE_SYMBOLS(CP_ARCHIVE_DEFINE)
#undef CP_ARCHIVE_DEFINE

typedef struct symbol {
    const char *name;
    void *slot; /* the address of its sym_ pointer */
} symbol;

#define CP_ARCHIVE_ENTRY(name) {#name, (void *)&sym_##name},
static const symbol symbols[] = {CP_ARCHIVE_SYMBOLS(CP_ARCHIVE_ENTRY)};
#undef CP_ARCHIVE_ENTRY

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = -1;
static char load_error[256];

static void load(void)
{
    /* never closed: the pointers stay valid for the life of the process */
    void *lib = dlopen(CP_ARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load libarchive (%s): %s", CP_ARCHIVE_SONAME,
                 e ? e : "unknown error");
        return;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *fn = dlsym(lib, symbols[i].name);
        if (!fn) {
            snprintf(load_error, sizeof load_error, "%s has no %s: libarchive 3.x is needed",
                     CP_ARCHIVE_SONAME, symbols[i].name);
            return;
        }
        /* ISO C has no conversion from void * to a function pointer;
         * POSIX guarantees that dlsym's result copies into one */
        memcpy(symbols[i].slot, &fn, sizeof fn);
    }
    load_rc = 0;
}

int cp_archive_load(const char **why)
{
    pthread_once(&once, load);
    if (load_rc != 0 && why)
        *why = load_error;
    return load_rc;
}
