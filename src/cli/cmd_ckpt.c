/* cmd_ckpt.c - `culprit ckpt [--json|--markdown] DIR`: is the checkpoint
 * safe to resume from? */
#include <stdlib.h>

#include "commands.h"
#include "opt.h"

enum { O_HELP, O_JSON, O_MARKDOWN, O_TEXT };

static const cli_opt options[] = {
    {O_JSON, 0, "json", NULL, "print the report as JSON (schema culprit.ckpt/1, docs/checkpoints.md)"},
    {O_MARKDOWN, 0, "markdown", NULL, "print a Markdown report"},
    {O_TEXT, 0, "text", NULL, "print the report for a person (the default)"},
    {O_HELP, 'h', "help", NULL, "show this help"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

static const char about[] =
    "Walks DIR for DeepSpeed, torch.distributed.checkpoint, Hugging Face Trainer, Megatron-LM and\n"
    "numbered step checkpoints; checks that every shard is there and every file is whole (torch.save\n"
    "ZIPs, safetensors headers) without Python; gives each checkpoint a verdict, names the newest\n"
    "safe one and how to resume from it.\n"
    "Exit status: 0 the newest checkpoint is safe, 1 a checkpoint is unsafe (or the pointer names\n"
    "one, or the newest cannot be vouched for), 2 usage error, DIR unreadable or no checkpoint found.";

static int run(const cli_args *a)
{
    culprit_ctx *ctx = NULL;
    culprit_ckpt_report *r = NULL;
    int status = EXIT_USAGE;
    if (culprit_ctx_new(&ctx) != CULPRIT_OK) {
        fprintf(stderr, "culprit: out of memory\n");
        goto done;
    }
    if (culprit_ckpt_inspect(&r, ctx, a->positional[0]) != CULPRIT_OK) {
        fprintf(stderr, "culprit ckpt: %s\n", culprit_ctx_error(ctx));
        goto done;
    }
    culprit_render_opts ro = {a->count[O_JSON] ? CULPRIT_JSON : a->count[O_MARKDOWN] ? CULPRIT_MARKDOWN : CULPRIT_TEXT,
                              false, 0, false, false};
    if (culprit_ckpt_render(r, stdout, &ro) != CULPRIT_OK)
        goto done;
    if (culprit_ckpt_count(r) == 0)
        fprintf(stderr, "culprit ckpt: no checkpoint found in %s\n", a->positional[0]);
    else
        status = culprit_ckpt_status(r);
done:
    culprit_ckpt_free(r);
    culprit_ctx_free(ctx);
    return status;
}

int cmd_ckpt(int argc, char **argv)
{
    cli_args a;
    int status = EXIT_USAGE;
    if (cli_parse(&a, argc, argv, 2, options, N_OPTIONS) != 0)
        fprintf(stderr, "culprit ckpt: %s (see 'culprit ckpt --help')\n", a.error);
    else if (a.count[O_HELP]) {
        cli_help(stdout, "culprit ckpt [--json|--markdown] DIR", about, options, N_OPTIONS);
        status = 0;
    } else if (a.n_positional != 1)
        fprintf(stderr, "culprit ckpt: give exactly one checkpoint folder\n");
    else
        status = run(&a);
    cli_args_free(&a);
    return status;
}
