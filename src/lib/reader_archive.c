/* reader_archive.c - archives and compressed files, member by member
 * (tar, zip and raw compressed streams through libarchive), each member a
 * stream of its own: nested archives are read to MAX_NEST deep. */
#include "reader_int.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_lib.h"

/* Not archive_read_support_{filter,format}_all: "all" brings mtree, whose
 * reader opens and reads files on this machine named inside the archive
 * (an uploaded bundle could pull /etc files into a report, or block on a
 * FIFO), and filters run as external programs (lrzip, lzop, grzip). These
 * are the ones log bundles use; raw makes a lone compressed file a
 * one-member archive. */
static int (**const filters[])(struct archive *) = {
    &sym_archive_read_support_filter_gzip, &sym_archive_read_support_filter_zstd,
    &sym_archive_read_support_filter_xz, &sym_archive_read_support_filter_bzip2,
    &sym_archive_read_support_filter_lz4, &sym_archive_read_support_filter_lzip,
    &sym_archive_read_support_filter_compress,
};
static int (**const formats[])(struct archive *) = {
    &sym_archive_read_support_format_tar, &sym_archive_read_support_format_zip,
    &sym_archive_read_support_format_empty, &sym_archive_read_support_format_raw,
};

static la_ssize_t in_read(struct archive *a, void *opaque, const void **out)
{
    archive_in *in = opaque;
    size_t n = in->pending;

    in->pending = 0;
    if (n == 0) {
        ssize_t k = rd_src_read(in->parent, (char *)in->block, IN_BLOCK);
        if (k < 0) {
            sym_archive_set_error(a, EIO, "%s", in->parent->msg);
            return -1;
        }
        n = (size_t)k;
    }
    in->consumed += n;
    *out = in->block;
    return (la_ssize_t)n;
}

/* A zip whose first member is ".../data.pkl" is a torch.save checkpoint. */
static bool is_checkpoint(struct archive *a, const char *name)
{
    size_t n = strlen(name);

    return (sym_archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP &&
           (strcmp(name, "data.pkl") == 0 ||
            (n > 9 && strcmp(name + n - 9, "/data.pkl") == 0));
}

static const char *entry_name(struct archive_entry *e)
{
    const char *name = sym_archive_entry_pathname(e);

    if (!name)
        name = sym_archive_entry_pathname_utf8(e);
    return name ? name : "?";
}

/* Reads one regular member; returns false when the archive cannot go on. */
static bool read_member(run *r, struct archive *a, archive_in *in,
                        const char *path, const char *name, int depth)
{
    source m = { .r = r, .fd = -1, .a = a, .in = in, .in_start = in->consumed };
    const bool raw = sym_archive_format(a) == ARCHIVE_FORMAT_RAW;
    const size_t size = strlen(path) + 1 + strlen(name) + 1;
    char *shown = raw ? NULL : malloc(size);

    if (!raw && !shown) {
        rd_fail(r, path, "out of memory");
        return false;
    }
    if (shown)
        snprintf(shown, size, "%s:%s", path, name);
    rd_read_stream(r, &m, raw ? path : shown, depth + 1);
    free(shown);
    return !m.fatal;
}

static void read_members(run *r, struct archive *a, archive_in *in,
                         const char *path, int depth)
{
    struct archive_entry *e;
    int members = 0, retries = 0;

    for (;;) {
        int rc = sym_archive_read_next_header(a, &e);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc == ARCHIVE_WARN) {
            const char *why = sym_archive_error_string(a);
            if (why)
                rd_warn(r, path, "%s", why);
        } else if (rc != ARCHIVE_OK) {
            const char *why = sym_archive_error_string(a);
            rd_fail(r, path, "truncated or corrupt archive: %s", why ? why : "unknown error");
            if (rc == ARCHIVE_FATAL || ++retries > 8)
                return;
            continue;
        }
        retries = 0;
        /* raw format straight over the bytes: no filter took them, so the
         * magic bytes lied (corrupt header); reading on would recurse */
        if (sym_archive_format(a) == ARCHIVE_FORMAT_RAW &&
            sym_archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE) {
            rd_fail(r, path, "truncated or corrupt archive: unrecognised data after the magic bytes");
            return;
        }
        if (sym_archive_entry_filetype(e) != AE_IFREG)
            continue;
        if (members++ == 0 && is_checkpoint(a, entry_name(e))) {
            rd_warn(r, path, "PyTorch checkpoint (binary), skipped");
            return;
        }
        if (!read_member(r, a, in, path, entry_name(e), depth))
            return;
    }
    if (members == 0)
        rd_warn(r, path, sym_archive_format(a) == ARCHIVE_FORMAT_EMPTY ? "empty file" : "empty archive");
}

/* Opens an archive over `src`, whose first head_len bytes are in r->buf. */
void rd_read_archive(run *r, source *src, const char *path, size_t head_len, int depth)
{
    const char *unloaded;
    if (cp_archive_load(&unloaded) != 0) {
        rd_warn(r, path, "archive or compressed file, skipped: %s", unloaded);
        return;
    }
    archive_in in = { .parent = src, .pending = head_len };
    struct archive *a = sym_archive_read_new();

    in.block = malloc(IN_BLOCK);
    if (!a || !in.block) {
        rd_fail(r, path, "out of memory");
        goto done;
    }
    assert(head_len <= IN_BLOCK);
    memcpy(in.block, r->buf, head_len);
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
        (void)(*filters[i])(a);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        (void)(*formats[i])(a);
    if (sym_archive_read_open(a, &in, NULL, in_read, NULL) != ARCHIVE_OK) {
        const char *why = sym_archive_error_string(a);
        rd_fail(r, path, "truncated or corrupt archive: %s", why ? why : "unknown error");
        goto done;
    }
    read_members(r, a, &in, path, depth);
done:
    sym_archive_read_free(a);
    free(in.block);
}

