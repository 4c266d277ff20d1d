/* ckpt_file.c - integrity of one checkpoint file, without Python.
 *
 * torch.save (>= 1.6) writes a ZIP. libarchive's seekable zip reader reads
 * the central directory at the end and then each local header; entry data
 * is skipped by seeking, and a seek past the end of the file fails, so a
 * truncated file is caught while reading only a few KiB of it. A legacy
 * torch.save file is a pickle and is reported as not checked. safetensors
 * is an 8-byte length, a JSON header and a buffer the header indexes
 * completely.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_lib.h"
#include "ckpt.h"

enum {
    READ_BLOCK = 64 * 1024,
    ST_HEADER_MAX = 100 * 1024 * 1024,  /* the safetensors reference limit */
    ZIP_ENTRIES_MAX = 1 << 20
};

typedef struct zsrc {
    int fd;
    int64_t size, pos;
    char buf[READ_BLOCK];
} zsrc;

static la_ssize_t z_read(struct archive *a, void *user, const void **out)
{
    zsrc *s = user;
    ssize_t got = pread(s->fd, s->buf, sizeof s->buf, (off_t)s->pos);
    if (got < 0) {
        sym_archive_set_error(a, errno, "read failed");
        return -1;
    }
    s->pos += got;
    *out = s->buf;
    return got;
}

/* Never past the end: a skip or seek that would go there reports a short
 * move, which libarchive treats as a truncated archive. */
static la_int64_t z_seek(struct archive *a, void *user, la_int64_t off, int whence)
{
    zsrc *s = user;
    (void)a;
    int64_t to = whence == SEEK_SET ? off : whence == SEEK_CUR ? s->pos + off : s->size + off;
    if (to < 0)
        return -1;
    s->pos = to > s->size ? s->size : to;
    return s->pos;
}

static la_int64_t z_skip(struct archive *a, void *user, la_int64_t request)
{
    zsrc *s = user;
    (void)a;
    int64_t left = s->size - s->pos;
    int64_t n = request < left ? request : left;
    s->pos += n;
    return n;
}

static int open_sized(const char *path, int64_t *size, char *msg, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(msg, n, "cannot read it: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *size = (int64_t)st.st_size;
    return fd;
}

static cp_file_check walk_zip(zsrc *s, char *msg, size_t n)
{
    const char *unloaded;
    if (cp_archive_load(&unloaded) != 0) {
        snprintf(msg, n, "a ZIP, not checked: %s", unloaded);
        return CP_FILE_UNCHECKED;
    }
    struct archive *a = sym_archive_read_new();
    if (!a) {
        snprintf(msg, n, "out of memory");
        return CP_FILE_BAD;
    }
    cp_file_check rc = CP_FILE_OK;
    sym_archive_read_support_format_zip_seekable(a);
    sym_archive_read_set_read_callback(a, z_read);
    sym_archive_read_set_seek_callback(a, z_seek);
    sym_archive_read_set_skip_callback(a, z_skip);
    sym_archive_read_set_callback_data(a, s);
    if (sym_archive_read_open1(a) != ARCHIVE_OK) {
        snprintf(msg, n, "no ZIP central directory: the file is cut short (%lld bytes) or damaged",
                 (long long)s->size);
        rc = CP_FILE_BAD;
        goto done;
    }
    struct archive_entry *e;
    int r, entries = 0;
    while ((r = sym_archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        if (++entries > ZIP_ENTRIES_MAX)
            break;
        int64_t sz = sym_archive_entry_size_is_set(e) ? sym_archive_entry_size(e) : -1;
        if (sz > s->size) {
            snprintf(msg, n, "entry %s claims %lld bytes, more than the file holds", sym_archive_entry_pathname(e),
                     (long long)sz);
            rc = CP_FILE_BAD;
            goto done;
        }
        if (sym_archive_read_data_skip(a) != ARCHIVE_OK) {
            snprintf(msg, n, "entry %s is cut short: %s", sym_archive_entry_pathname(e), sym_archive_error_string(a));
            rc = CP_FILE_BAD;
            goto done;
        }
    }
    if (r != ARCHIVE_EOF && entries <= ZIP_ENTRIES_MAX) {
        snprintf(msg, n, "damaged ZIP after %d entries: %s", entries, sym_archive_error_string(a));
        rc = CP_FILE_BAD;
    } else if (entries == 0) {
        snprintf(msg, n, "ZIP archive with no entries");
        rc = CP_FILE_BAD;
    }
done:
    sym_archive_read_free(a);
    return rc;
}

cp_file_check cp_ckpt_check_zip(const char *path, char *msg, size_t n)
{
    zsrc *s = malloc(sizeof *s);
    if (!s) {
        snprintf(msg, n, "out of memory");
        return CP_FILE_BAD;
    }
    cp_file_check rc = CP_FILE_BAD;
    s->pos = 0;
    s->fd = open_sized(path, &s->size, msg, n);
    if (s->fd < 0)
        goto done;
    unsigned char head[4] = {0};
    ssize_t got = pread(s->fd, head, sizeof head, 0);
    if (got == 0) {
        snprintf(msg, n, "empty file (0 bytes)");
    } else if (got >= 1 && head[0] == 0x80) {
        snprintf(msg, n, "legacy torch.save format (a pickle), not checked");
        rc = CP_FILE_UNCHECKED;
    } else if (got < 4 || memcmp(head, "PK\003\004", 4) != 0) {
        snprintf(msg, n, "neither a ZIP (torch.save) nor a pickle");
    } else {
        rc = walk_zip(s, msg, n);
    }
    close(s->fd);
done:
    free(s);
    return rc;
}

static uint64_t le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* Largest data_offsets end in the header, or -1 with msg set. */
static int64_t st_max_end(json_t *hdr, uint64_t buffer, char *msg, size_t n)
{
    const char *key;
    json_t *t;
    int64_t max_end = 0;
    json_object_foreach(hdr, key, t) {
        if (strcmp(key, "__metadata__") == 0)
            continue;
        json_t *off = json_object_get(t, "data_offsets");
        json_t *b = json_array_get(off, 0), *e = json_array_get(off, 1);
        if (!json_is_integer(b) || !json_is_integer(e) || json_array_size(off) != 2) {
            snprintf(msg, n, "tensor %s has no valid data_offsets", key);
            return -1;
        }
        json_int_t bv = json_integer_value(b), ev = json_integer_value(e);
        if (bv < 0 || ev < bv || (uint64_t)ev > buffer) {
            snprintf(msg, n, "tensor %s lies outside the data (offsets %lld-%lld, %llu bytes of data)", key,
                     (long long)bv, (long long)ev, (unsigned long long)buffer);
            return -1;
        }
        if (ev > max_end)
            max_end = ev;
    }
    return max_end;
}

cp_file_check cp_ckpt_check_safetensors(const char *path, char *msg, size_t n)
{
    int64_t size;
    int fd = open_sized(path, &size, msg, n);
    if (fd < 0)
        return CP_FILE_BAD;
    cp_file_check rc = CP_FILE_BAD;
    char *hbuf = NULL;
    json_t *hdr = NULL;
    unsigned char lenb[8];
    if (size == 0) {
        snprintf(msg, n, "empty file (0 bytes)");
        goto done;
    }
    if (size < 8 || pread(fd, lenb, 8, 0) != 8) {
        snprintf(msg, n, "shorter than the 8-byte header length");
        goto done;
    }
    uint64_t hlen = le64(lenb);
    if (hlen == 0 || hlen > ST_HEADER_MAX || hlen > (uint64_t)size - 8) {
        snprintf(msg, n, "header length %llu does not fit the file (%lld bytes)", (unsigned long long)hlen,
                 (long long)size);
        goto done;
    }
    if (!(hbuf = malloc(hlen)) || pread(fd, hbuf, hlen, 8) != (ssize_t)hlen) {
        snprintf(msg, n, "cannot read the header");
        goto done;
    }
    json_error_t jerr;
    hdr = json_loadb(hbuf, hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(hdr)) {
        snprintf(msg, n, "header is not a JSON object: %s", hdr ? "wrong type" : jerr.text);
        goto done;
    }
    uint64_t buffer = (uint64_t)size - 8 - hlen;
    int64_t max_end = st_max_end(hdr, buffer, msg, n);
    if (max_end < 0)
        goto done;
    if ((uint64_t)max_end != buffer) {
        snprintf(msg, n, "size %lld bytes, the header says %llu", (long long)size,
                 (unsigned long long)(8 + hlen + (uint64_t)max_end));
        goto done;
    }
    rc = CP_FILE_OK;
done:
    json_decref(hdr);
    free(hbuf);
    close(fd);
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

cp_file_check cp_ckpt_check_file(const char *path, char *msg, size_t n)
{
    if (ends_with(path, ".safetensors"))
        return cp_ckpt_check_safetensors(path, msg, n);
    if (ends_with(path, ".pt") || ends_with(path, ".pth"))
        return cp_ckpt_check_zip(path, msg, n);
    if (ends_with(path, ".bin")) {
        cp_file_check rc = cp_ckpt_check_zip(path, msg, n);
        /* a .bin that is neither may be any binary: only torch.save's are checked */
        if (rc == CP_FILE_BAD && strstr(msg, "neither a ZIP")) {
            snprintf(msg, n, "not a torch.save file, not checked");
            return CP_FILE_UNCHECKED;
        }
        return rc;
    }
    return CP_FILE_OK;
}
