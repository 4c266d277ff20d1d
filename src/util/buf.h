/* buf.h - growable byte buffers with a hard size cap.
 *
 * Every buffer that grows from input has a cap (STYLE.md: memory is
 * bounded). Appending past the cap truncates and reports it; callers decide
 * whether that matters.
 */
#ifndef CULPRIT_BUF_H
#define CULPRIT_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cp_buf {
    char *data;      /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;      /* allocated bytes */
    size_t max;      /* hard cap on len; 0 = 1 GiB */
    bool truncated;  /* an append did not fit */
} cp_buf;

void cp_buf_init(cp_buf *b, size_t max);
void cp_buf_free(cp_buf *b);
void cp_buf_clear(cp_buf *b);
/* Returns 0, or -1 when out of memory or the cap cut the append short. */
int cp_buf_append(cp_buf *b, const char *s, size_t n);
int cp_buf_puts(cp_buf *b, const char *s);
int cp_buf_printf(cp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the string over to the caller (who frees it) and resets b. */
char *cp_buf_take(cp_buf *b);

/* Makes room for one more element in a growable array of n elements:
 * when n == *cap, doubles *cap (starting at `first`) and reallocs. Returns
 * the array (perhaps moved), or NULL when out of memory (then `array` is
 * still valid and *cap unchanged). */
void *cp_grow(void *array, size_t *cap, size_t n, size_t elem, size_t first);

#endif
