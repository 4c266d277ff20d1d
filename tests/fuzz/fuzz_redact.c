/* fuzz_redact.c - redaction on arbitrary text: secrets only, and with
 * anonymizing (the first line registers host names). Checks that the
 * output is a string and that redacting twice changes nothing more. */
#include "fuzz_common.h"

#include "redact.h"

static void once(unsigned flags, const char *host, const char *text)
{
    cp_redactor *r = NULL;
    if (cp_redactor_new(&r, flags) != 0)
        abort();
    cp_redactor_know_host(r, host);
    cp_redactor_learn(r, text);
    char *a = cp_redact(r, text);
    char *b = a ? cp_redact(r, a) : NULL;
    if (a && b && !(flags & CP_REDACT_ANONYMIZE) && strcmp(a, b) != 0) {
        fprintf(stderr, "not idempotent:\n%s\n%s\n", a, b);
        abort();
    }
    char h[CP_HOST_MAX];
    snprintf(h, sizeof h, "%s", host);
    cp_redact_host(r, h, sizeof h);
    free(a);
    free(b);
    cp_redactor_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup(data, size);
    if (!s)
        return 0;
    char *nl = strchr(s, '\n');
    const char *host = "";
    const char *text = s;
    if (nl) {
        *nl = '\0';
        host = s;
        text = nl + 1;
    }
    once(CP_REDACT_SECRETS, host, text);
    once(CP_REDACT_SECRETS | CP_REDACT_ANONYMIZE, host, text);
    free(s);
    return 0;
}
