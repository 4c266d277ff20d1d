#include "capset.h"

#include <stdlib.h>
#include <string.h>

/* A name's bit in cp_capset.names: a hash of it, folded to 16 bits. Two
 * names may share a bit; the walk then settles it. */
static uint16_t name_bit(const char *name)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (uint16_t)(1u << ((h ^ (h >> 16)) & 15));
}

int cp_capset_pack(cp_capset *out, const cp_captures *c)
{
    memset(out, 0, sizeof *out);
    size_t size = 0;
    for (int i = 0; i < c->n; i++)
        size += strlen(c->v[i].name) + 1 + strlen(c->v[i].value) + 1;
    if (size == 0)
        return 0;
    char *p = malloc(size);
    if (!p)
        return -1;
    out->packed = p;
    out->size = (uint32_t)size;
    out->n = (uint16_t)c->n;
    for (int i = 0; i < c->n; i++) {
        out->names |= name_bit(c->v[i].name);
        size_t nl = strlen(c->v[i].name) + 1, vl = strlen(c->v[i].value) + 1;
        memcpy(p, c->v[i].name, nl);
        memcpy(p + nl, c->v[i].value, vl);
        p += nl + vl;
    }
    return 0;
}

void cp_capset_free(cp_capset *s)
{
    if (!s)
        return;
    free(s->packed);
    memset(s, 0, sizeof *s);
}

const char *cp_capset_next(const cp_capset *s, const char *prev, const char **value)
{
    const char *p = s->packed;
    if (prev) {
        p = prev + strlen(prev) + 1;   /* its value */
        p += strlen(p) + 1;            /* the next name */
    }
    if (!p || p >= s->packed + s->size)
        return NULL;
    *value = p + strlen(p) + 1;
    return p;
}

const char *cp_capset_get(const cp_capset *s, const char *name)
{
    const char *value;
    if (!(s->names & name_bit(name)))
        return NULL;
    for (const char *k = cp_capset_next(s, NULL, &value); k; k = cp_capset_next(s, k, &value))
        if (strcmp(k, name) == 0)
            return value;
    return NULL;
}
