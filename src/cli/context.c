/* context.c - the rule loading every subcommand shares. */
#include <stdio.h>

#include "commands.h"

culprit_ctx *cli_load_context(const char *const *rule_files, int n_rule_files, const char *rules_dir)
{
    culprit_ctx *ctx = NULL;
    if (culprit_ctx_new(&ctx) != CULPRIT_OK) {
        fprintf(stderr, "culprit: out of memory\n");
        return NULL;
    }
    const char *dir = rules_dir ? rules_dir : culprit_default_rules_dir();
    int rc = culprit_ctx_load_rules_dir(ctx, dir);
    for (int i = 0; rc == CULPRIT_OK && i < n_rule_files; i++)
        rc = culprit_ctx_load_rules_file(ctx, rule_files[i]);
    if (rc == CULPRIT_OK)
        rc = culprit_ctx_compile(ctx);
    if (rc != CULPRIT_OK) {
        fprintf(stderr, "culprit: %s\n", culprit_ctx_error(ctx));
        culprit_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}
