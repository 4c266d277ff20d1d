/* mapping.c - counted read-only file mappings and the SIGBUS guard (see
 * mapping.h).
 *
 * The guard is process-wide state, unlike the rest of the library: a
 * signal handler is. It is a fixed table of the live mappings (address,
 * size, the message to print) in static storage, so that the handler reads
 * nothing another thread could free under it, and a handler installed
 * while the table has users. A table that is full means the file is read
 * instead, never a mapping without a guard.
 */
#include "mapping.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    GUARD_SLOTS = 64,   /* live mappings, all runs together: a run keeps
                           one per file with chunks still in its pipeline */
    GUARD_PATH = 480,   /* bytes of the path in the message */
};

typedef struct guard_slot {
    atomic_bool taken;
    _Atomic uintptr_t base;   /* 0 while the slot is being filled or emptied */
    _Atomic size_t size;
    size_t msg_len;
    char msg[GUARD_PATH + 64];
} guard_slot;

static guard_slot guard[GUARD_SLOTS];
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static int guard_users;                /* under guard_lock */
static struct sigaction guard_before;  /* the disposition to restore */

struct cp_mapping {
    char *data;
    size_t size;
    size_t page;
    atomic_size_t refs;
    guard_slot *slot;
};

/* Async-signal-safe: atomic loads, write(2), _exit(2), sigaction, raise. A
 * fault in a mapping whose file shrank cannot be recovered from (the bytes
 * are gone), so the run ends with a message instead of a core dump. */
static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
    const uintptr_t at = (uintptr_t)info->si_addr;

    (void)uctx;
    for (size_t i = 0; i < GUARD_SLOTS; i++) {
        const guard_slot *g = &guard[i];
        const uintptr_t base = atomic_load_explicit(&g->base, memory_order_acquire);
        if (base && at - base < atomic_load_explicit(&g->size, memory_order_relaxed)) {
            ssize_t k = write(STDERR_FILENO, g->msg, g->msg_len);
            (void)k;
            _exit(2);
        }
    }
    /* Not ours: the disposition from before takes it. A fault happens
     * again when the handler returns; a signal someone sent is resent. */
    (void)sigaction(sig, &guard_before, NULL);
    if (info->si_code <= 0)
        (void)raise(sig);
}

static bool guard_enter(void)
{
    bool ok = true;

    pthread_mutex_lock(&guard_lock);
    if (guard_users == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        ok = sigaction(SIGBUS, &sa, &guard_before) == 0;
    }
    if (ok)
        guard_users++;
    pthread_mutex_unlock(&guard_lock);
    return ok;
}

static void guard_leave(void)
{
    pthread_mutex_lock(&guard_lock);
    assert(guard_users > 0);
    if (--guard_users == 0)
        (void)sigaction(SIGBUS, &guard_before, NULL);
    pthread_mutex_unlock(&guard_lock);
}

/* A free slot that names the mapping at [base, base + size), or NULL. */
static guard_slot *guard_claim(const char *base, size_t size, const char *path)
{
    for (size_t i = 0; i < GUARD_SLOTS; i++) {
        guard_slot *g = &guard[i];
        if (atomic_exchange(&g->taken, true))
            continue;
        snprintf(g->msg, sizeof g->msg, "culprit: %.*s shrank while being read; run again\n",
                 (int)GUARD_PATH, path);
        g->msg_len = strlen(g->msg);
        atomic_store_explicit(&g->size, size, memory_order_relaxed);
        /* release: a handler that sees base sees the message too */
        atomic_store_explicit(&g->base, (uintptr_t)base, memory_order_release);
        return g;
    }
    return NULL;
}

static void guard_free(guard_slot *g)
{
    atomic_store(&g->base, 0);
    atomic_store(&g->taken, false);
}

cp_mapping *cp_mapping_open(int fd, size_t size, const char *path)
{
    cp_mapping *m = calloc(1, sizeof *m);
    const long page = sysconf(_SC_PAGESIZE);
    void *p = MAP_FAILED;
    bool guarded = false;

    if (!m || size == 0 || page <= 0 || !(guarded = guard_enter()))
        goto fail;
    p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        goto fail;
    m->data = p;
    m->size = size;
    m->page = (size_t)page;
    atomic_init(&m->refs, 1);
    /* published only once mapped, unpublished before unmapped: the table
     * never names an address range that is not this file */
    if (!(m->slot = guard_claim(m->data, size, path)))
        goto fail;
    return m;
fail:
    if (p != MAP_FAILED)
        munmap(p, size);
    if (guarded)
        guard_leave();
    free(m);
    return NULL;
}

const char *cp_mapping_data(const cp_mapping *m)
{
    return m->data;
}

size_t cp_mapping_size(const cp_mapping *m)
{
    return m->size;
}

void cp_mapping_ref(cp_mapping *m)
{
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void cp_mapping_drop(cp_mapping *m, const char *data, size_t len)
{
    const uintptr_t mask = ~(uintptr_t)(m->page - 1);
    const uintptr_t from = (uintptr_t)data & mask, to = ((uintptr_t)data + len) & mask;

    assert(data >= m->data && len <= m->size - (size_t)(data - m->data));
    /* MADV_DONTNEED on a private file mapping that was never written
     * unmaps the pages; the next access maps them again from the page
     * cache with the same bytes. It only fails for arguments. */
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_DONTNEED);
}

void cp_mapping_release(cp_mapping *m, const char *data, size_t len)
{
    if (!m)
        return;
    if (len)
        cp_mapping_drop(m, data, len);
    /* acq_rel: every holder's reads happen before the unmapping */
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    guard_free(m->slot);
    munmap(m->data, m->size);
    guard_leave();
    free(m);
}
