/* frame_path.c - what a log file's path says about its writer (see
 * frame.h, cp_frame_from_path): rank and local rank from file and folder
 * names, the host from a folder named like a machine. */
#include "frame.h"
#include "frame_int.h"

enum { PATH_COMPONENTS = 6 };   /* trailing path components looked at */

/* Leading words of path components that name a machine: "node003",
 * "gpu20-15", "host-a12", "ip-10-0-1-23", "rdma-gpu-train-worker-0". */
static int path_host_stem(const char *s, size_t len)
{
    static const char *const stems[] = {
        "node", "gpu", "host", "compute", "worker", "cn", "nid", "dgx", "hgx", "srv",
        "server", "machine", "ip", "n", "g", "c", "gn", "cpu", "hpc", "login", "trn", "pod",
    };
    return eq_nocase_any(s, len, stems, sizeof stems / sizeof stems[0]);
}

/* A folder name is a host if it is an IPv4 address, or a hostname with a
 * digit one of whose '-'-separated parts starts with a machine word. Being
 * wrong costs more than missing: "logs", "run1", "llama-2-7b" are not. */
static int path_host_ok(const char *s, size_t len)
{
    int digit = 0, stem = 0;
    if (len == 0 || len >= CP_HOST_MAX)
        return 0;
    if (is_ipv4(s, len))
        return 1;
    const char *dot = memchr(s, '.', len);
    if (dot)
        len = (size_t)(dot - s);
    if (len == 0 || !is_alpha(s[0]))
        return 0;
    for (size_t k = 0, part = 0; k <= len; k++) {
        if (k == len || s[k] == '-') {
            size_t a = part;
            while (a < k && is_alpha(s[a]))
                a++;
            if (a > part && path_host_stem(s + part, a - part))
                stem = 1;
            part = k + 1;
            continue;
        }
        if (is_digit(s[k]))
            digit = 1;
        else if (!is_alpha(s[k]))
            return 0;
    }
    return digit && stem;
}

/* "rank_27", "rank27", "rank-27", "train_rank3", "local_rank_3". */
static int path_rank(const char *s, size_t len, int64_t *v, int *local)
{
    for (size_t i = 0; i + 4 < len; i++) {
        if (!eq_nocase(s + i, 4, "rank"))
            continue;
        int sep_before = i > 0 && (s[i - 1] == '_' || s[i - 1] == '-');
        int loc = (i >= 5 && eq_nocase(s + i - 5, 5, "local")) ||
                  (i >= 6 && sep_before && eq_nocase(s + i - 6, 5, "local"));
        if (!loc && i > 0 && s[i - 1] != '_' && s[i - 1] != '-' && s[i - 1] != '.')
            continue;
        size_t q = i + 4;
        if (s[q] == '_' || s[q] == '-')
            q++;
        size_t k = read_num(s, len, q, 7, v);
        if (!k || (q + k < len && s[q + k] != '_' && s[q + k] != '-' && s[q + k] != '.'))
            continue;
        *local = loc;
        return 1;
    }
    return 0;
}

typedef struct path_comp {
    const char *s;
    size_t len;
} path_comp;

/* A component is "attempt_<N>" (torchrun --log_dir). */
static int is_attempt_dir(const path_comp *c)
{
    int64_t v;
    return c->len > 8 && memcmp(c->s, "attempt_", 8) == 0 &&
           read_num(c->s, c->len, 8, 9, &v) == c->len - 8;
}

/* Splits the last PATH_COMPONENTS components off `path`, last first; '/'
 * and the ':' of "archive.tgz:member/path" separate them. Returns how many
 * and whether comp[0] is the file name (no trailing '/'). */
static size_t split_path(const char *path, path_comp *comp, int *has_file)
{
    size_t end = strlen(path), nc = 0;
    *has_file = end > 0 && path[end - 1] != '/';
    while (end > 0 && nc < PATH_COMPONENTS) {
        while (end > 0 && (path[end - 1] == '/' || path[end - 1] == ':'))
            end--;
        size_t b = end;
        while (b > 0 && path[b - 1] != '/' && path[b - 1] != ':')
            b--;
        if (end > b && !(end - b == 1 && path[b] == '.')) {
            comp[nc].s = path + b;
            comp[nc].len = end - b;
            nc++;
        }
        end = b;
    }
    return nc;
}

static void copy_host(cp_origin *out, const char *h, size_t len)
{
    if (!is_ipv4(h, len)) {
        const char *dot = memchr(h, '.', len);
        if (dot)
            len = (size_t)(dot - h);
    }
    if (len >= CP_HOST_MAX)
        len = CP_HOST_MAX - 1;
    memcpy(out->host, h, len);
    out->host[len] = '\0';
}

void cp_frame_from_path(const char *path, cp_origin *out)
{
    path_comp comp[PATH_COMPONENTS];
    int has_file;
    if (!path || !out)
        return;
    size_t nc = split_path(path, comp, &has_file);
    int have_rank = 0, have_local = 0, have_host = 0;
    /* nearest component first: the file, its folder, the folder above ... */
    for (size_t i = 0; i < nc; i++) {
        path_comp c = comp[i];
        if (i == 0 && has_file) {   /* the file name: its stem */
            const char *dot = memchr(c.s, '.', c.len);
            if (dot && dot != c.s)
                c.len = (size_t)(dot - c.s);
        }
        int64_t v;
        int local;
        if (path_rank(c.s, c.len, &v, &local)) {
            if (local && !have_local) {
                out->local_rank = (int32_t)v;
                have_local = 1;
            } else if (!local && !have_rank) {
                out->rank = (int32_t)v;
                have_rank = 1;
            }
            continue;
        }
        if (i + 1 < nc && read_num(c.s, c.len, 0, 5, &v) == c.len && is_attempt_dir(&comp[i + 1])) {
            if (!have_local) {      /* ".../attempt_0/3/stderr.log" */
                out->local_rank = (int32_t)v;
                have_local = 1;
            }
            continue;
        }
        if (!have_host && path_host_ok(c.s, c.len)) {
            copy_host(out, c.s, c.len);
            have_host = 1;
        }
    }
}
