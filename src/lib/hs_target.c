/* hs_target.c - the vectorscan build that scans (see hs_target.h). */
#include "hs_target.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

static struct {
    pthread_once_t once;
    cp_hs_scan_fn scan;
    hs_platform_info_t platform;
    bool sse42;
} target = { .once = PTHREAD_ONCE_INIT };

/* The SSE4.2 build's entry point where the CPU can run it (the fat
 * runtime's own test: SSE4.2 and POPCNT) and the library has one; NULL
 * otherwise. */
static cp_hs_scan_fn sse42_routine(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("sse4.2") || !__builtin_cpu_supports("popcnt"))
        return NULL;
    void *sym = dlsym(RTLD_DEFAULT, "corei7_hs_scan");
    cp_hs_scan_fn fn;
    /* POSIX: the object pointer dlsym gives converts to the function's */
    *(void **)&fn = sym;
    return sym ? fn : NULL;
#else
    return NULL;
#endif
}

static void choose(void)
{
    cp_hs_scan_fn sse42 = sse42_routine();

    target.scan = hs_scan;
    if (sse42 && hs_populate_platform(&target.platform) == HS_SUCCESS) {
        target.platform.cpu_features = 0; /* no AVX2, no AVX-512 */
        target.scan = sse42;
        target.sse42 = true;
    }
}

cp_hs_scan_fn cp_hs_scan_routine(void)
{
    pthread_once(&target.once, choose);
    return target.scan;
}

const hs_platform_info_t *cp_hs_platform(void)
{
    pthread_once(&target.once, choose);
    return target.sse42 ? &target.platform : NULL;
}

const char *cp_hs_target_name(void)
{
    pthread_once(&target.once, choose);
    return target.sse42 ? "sse42" : "host";
}
