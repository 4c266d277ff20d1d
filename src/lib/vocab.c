#include "vocab.h"

#include <string.h>

static const char *const kind_names[CP_KIND_COUNT] = {
    "", "cuda_oom", "host_oom", "nccl_timeout", "nccl_comm_error",
    "collective_mismatch", "dtensor_mismatch", "zero3_param_state",
    "config_invalid", "loss_scale_floor", "mixed_dtype_gather",
    "gpu_hardware", "cuda_error", "checkpoint_io", "checkpoint_hang",
    "pipeline_hang", "rendezvous_error", "build_error",
    "python_exception", "unknown",
};

static const char *const owner_names[CP_OWNER_COUNT] = {
    "auto", "user_code", "config", "framework", "hardware",
    "infrastructure", "numeric", "unknown",
};

static const char *const phase_names[CP_PHASE_COUNT] = {
    "-", "init", "model_load", "forward", "backward", "optimizer_step",
    "checkpoint_save", "checkpoint_load", "eval", "unknown",
};

static const char *const role_names[CP_ROLE_COUNT] = {
    "", "root", "cascade", "context", "progress", "phase",
    "frame", "traceback", "identity", "culprit", "conclusion", "library",
};

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (names[i][0] && strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *cp_kind_name(cp_kind k) { return k < CP_KIND_COUNT ? kind_names[k] : "unknown"; }
const char *cp_owner_name(cp_owner o) { return o < CP_OWNER_COUNT ? owner_names[o] : "unknown"; }
const char *cp_phase_name(cp_phase p) { return p < CP_PHASE_COUNT ? phase_names[p] : "unknown"; }
const char *cp_role_name(cp_role r) { return r < CP_ROLE_COUNT ? role_names[r] : ""; }
int cp_kind_from_name(const char *s) { return lookup(kind_names, CP_KIND_COUNT, s); }
int cp_owner_from_name(const char *s) { return lookup(owner_names, CP_OWNER_COUNT, s); }
int cp_phase_from_name(const char *s) { return lookup(phase_names, CP_PHASE_COUNT, s); }
int cp_role_from_name(const char *s) { return lookup(role_names, CP_ROLE_COUNT, s); }
