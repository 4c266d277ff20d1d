/* pcre_jit.h - JIT-compiling a PCRE2 code, the one switch for it.
 *
 * Valgrind cannot follow JIT-compiled code (it reports false errors), so
 * the memcheck jobs run with CULPRIT_PCRE2_NO_JIT=1, and every expression
 * is then interpreted. Include after <pcre2.h>.
 */
#ifndef CULPRIT_PCRE_JIT_H
#define CULPRIT_PCRE_JIT_H

#include <stdlib.h>

/* Compiles p for the JIT unless CULPRIT_PCRE2_NO_JIT is set to a value
 * other than "" or "0"; NULL is ignored. A code the JIT cannot take
 * stays interpreted. */
static inline void cp_pcre2_jit(pcre2_code *p)
{
    const char *no_jit = getenv("CULPRIT_PCRE2_NO_JIT");
    if (p && (!no_jit || !*no_jit || *no_jit == '0'))
        pcre2_jit_compile(p, PCRE2_JIT_COMPLETE);
}

#endif
