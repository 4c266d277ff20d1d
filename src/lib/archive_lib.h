/* archive_lib.h - libarchive, opened the first time an input needs it.
 *
 * Linking libarchive loads libxml2, ICU, nettle, libacl and seven
 * compression libraries at every start: 3.5 ms, a third of the time
 * culprit takes to diagnose a small file. Most inputs are plain text, so
 * the library is opened with dlopen when a stream first sniffs as an
 * archive or compressed file, or a checkpoint's ZIP is checked (systemd
 * opens its optional libraries the same way). The build still finds
 * libarchive with pkg-config, for its headers and to check that it is
 * there; the name loaded is its soname, CULPRIT_LIBARCHIVE_SONAME
 * (meson option libarchive_soname).
 *
 * Code calls sym_archive_read_new() where it would call
 * archive_read_new(): each sym_ pointer has the type of the function it
 * stands for, and is set once cp_archive_load() has returned 0.
 */
#ifndef CULPRIT_ARCHIVE_LIB_H
#define CULPRIT_ARCHIVE_LIB_H

#include <archive.h>
#include <archive_entry.h>

/* Every libarchive function culprit calls outside its tests. */
#define CP_ARCHIVE_SYMBOLS(X)                                                                      \
    X(archive_entry_filetype)                                                                      \
    X(archive_entry_pathname)                                                                      \
    X(archive_entry_pathname_utf8)                                                                 \
    X(archive_entry_size)                                                                          \
    X(archive_entry_size_is_set)                                                                   \
    X(archive_error_string)                                                                        \
    X(archive_filter_code)                                                                         \
    X(archive_format)                                                                              \
    X(archive_read_data)                                                                           \
    X(archive_read_data_skip)                                                                      \
    X(archive_read_free)                                                                           \
    X(archive_read_new)                                                                            \
    X(archive_read_next_header)                                                                    \
    X(archive_read_open)                                                                           \
    X(archive_read_open1)                                                                          \
    X(archive_read_set_callback_data)                                                              \
    X(archive_read_set_read_callback)                                                              \
    X(archive_read_set_seek_callback)                                                              \
    X(archive_read_set_skip_callback)                                                              \
    X(archive_read_support_filter_bzip2)                                                           \
    X(archive_read_support_filter_compress)                                                        \
    X(archive_read_support_filter_gzip)                                                            \
    X(archive_read_support_filter_lz4)                                                             \
    X(archive_read_support_filter_lzip)                                                            \
    X(archive_read_support_filter_xz)                                                              \
    X(archive_read_support_filter_zstd)                                                            \
    X(archive_read_support_format_empty)                                                           \
    X(archive_read_support_format_raw)                                                             \
    X(archive_read_support_format_tar)                                                             \
    X(archive_read_support_format_zip)                                                             \
    X(archive_read_support_format_zip_seekable)                                                    \
    X(archive_set_error)

#define CP_ARCHIVE_DECLARE(name) extern __typeof__(name) *sym_##name;
CP_ARCHIVE_SYMBOLS(CP_ARCHIVE_DECLARE)
#undef CP_ARCHIVE_DECLARE

/* Opens libarchive and sets every sym_ pointer, once per process (later
 * calls give the first call's answer; safe from any thread). Returns 0,
 * or -1 with *why set to a sentence for the user, in static storage. */
int cp_archive_load(const char **why);

#endif
