/* commands.h - the subcommands; each lives in its own cmd_<name>.c. */
#ifndef CULPRIT_CLI_COMMANDS_H
#define CULPRIT_CLI_COMMANDS_H

#include "culprit/culprit.h"

/* Exit statuses of the program (documented in the README). */
enum {
    EXIT_NO_FAILURE = 0,   /* nothing wrong found */
    EXIT_FAILURE_FOUND = 1,/* a failure was diagnosed */
    EXIT_USAGE = 2         /* bad usage, bad rules, or no usable input */
};

int cmd_diagnose(int argc, char **argv);
int cmd_ckpt(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_scan(int argc, char **argv);

/* Creates a context with the built-in rules plus every --rules file.
 * Prints the error and returns NULL on failure. */
culprit_ctx *cli_load_context(const char *const *rule_files, int n_rule_files, const char *rules_dir);

#endif
