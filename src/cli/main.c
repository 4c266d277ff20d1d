/* main.c - dispatches to the subcommands listed in one table. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"diagnose", cmd_diagnose, "find the first failing rank, what failed, and what to do"},
    {"ckpt", cmd_ckpt, "is the checkpoint safe to resume from? check a checkpoint folder"},
    {"explain", cmd_explain, "show what the rule catalog knows about a log line"},
    {"rules", cmd_rules, "list or check the rule catalog"},
    {"scan", cmd_scan, "summarise one node's logs for a later merged diagnosis"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: culprit <command> [options] [args]\n\n"
                 "culprit reads the logs of a failed distributed training run and says which rank\n"
                 "failed first, what the error means, whose move it is, and what to do first.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'culprit <command> --help' describes a command. 'culprit --version' prints the version.\n"
                 "Exit status: 0 no failure found, 1 failure diagnosed, 2 usage error or no usable input.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("culprit %s\n", culprit_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc, argv);
    fprintf(stderr, "culprit: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
