#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_MAX = 1 << 30 };

void cp_buf_init(cp_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max ? max : DEFAULT_MAX;
}

void cp_buf_free(cp_buf *b)
{
    if (!b)
        return;
    free(b->data);
    size_t max = b->max;
    cp_buf_init(b, max);
}

void cp_buf_clear(cp_buf *b)
{
    b->len = 0;
    b->truncated = false;
    if (b->data)
        b->data[0] = '\0';
}

static int grow(cp_buf *b, size_t need)
{
    if (need + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int cp_buf_append(cp_buf *b, const char *s, size_t n)
{
    int rc = 0;
    if (b->len + n > b->max) {
        n = b->max - b->len;
        b->truncated = true;
        rc = -1;
    }
    if (grow(b, b->len + n) != 0)
        return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return rc;
}

int cp_buf_puts(cp_buf *b, const char *s)
{
    return cp_buf_append(b, s, strlen(s));
}

int cp_buf_printf(cp_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof small)
        return cp_buf_append(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return -1;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = cp_buf_append(b, big, (size_t)n);
    free(big);
    return rc;
}

char *cp_buf_take(cp_buf *b)
{
    char *s = b->data;
    if (!s)
        s = calloc(1, 1);
    size_t max = b->max;
    cp_buf_init(b, max);
    return s;
}

void *cp_grow(void *array, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return array;
    size_t c = *cap ? *cap * 2 : first;
    void *p = realloc(array, c * elem);
    if (p)
        *cap = c;
    return p;
}
