/* fuzz_ckpt_safetensors.c - the checkpoint inspector's file checks on
 * arbitrary bytes: the safetensors header (length, JSON, data_offsets),
 * the torch.save ZIP walk, and step numbers in names. */
#include "fuzz_common.h"

#include <fcntl.h>

#include "ckpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[80];
    static int fd = -1;
    if (fd < 0) {
        snprintf(path, sizeof path, "/tmp/culprit-fuzz-ckpt-%d.safetensors", (int)getpid());
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            return 0;
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return 0;
    char msg[512];
    cp_ckpt_check_safetensors(path, msg, sizeof msg);
    cp_ckpt_check_zip(path, msg, sizeof msg);
    char *text = fuzz_strndup(data, size < 4096 ? size : 4096);
    if (text) {
        cp_ckpt_step_in_text(text);
        free(text);
    }
    return 0;
}
