/* vocab.h - the fixed vocabularies of a diagnosis: kinds, owners, phases
 * and rule roles, with their spelling in rule files and JSON. */
#ifndef CULPRIT_VOCAB_H
#define CULPRIT_VOCAB_H

typedef enum cp_kind {
    CP_KIND_NONE = 0, /* not set (a rule without a kind) */
    CP_KIND_CUDA_OOM, CP_KIND_HOST_OOM, CP_KIND_NCCL_TIMEOUT, CP_KIND_NCCL_COMM_ERROR,
    CP_KIND_COLLECTIVE_MISMATCH, CP_KIND_DTENSOR_MISMATCH, CP_KIND_ZERO3_PARAM_STATE,
    CP_KIND_CONFIG_INVALID, CP_KIND_LOSS_SCALE_FLOOR, CP_KIND_MIXED_DTYPE_GATHER,
    CP_KIND_GPU_HARDWARE, CP_KIND_CUDA_ERROR, CP_KIND_CHECKPOINT_IO, CP_KIND_CHECKPOINT_HANG,
    CP_KIND_PIPELINE_HANG, CP_KIND_RENDEZVOUS_ERROR, CP_KIND_BUILD_ERROR,
    CP_KIND_PYTHON_EXCEPTION, CP_KIND_UNKNOWN,
    CP_KIND_COUNT
} cp_kind;

typedef enum cp_owner {
    CP_OWNER_AUTO = 0, /* decided from the traceback */
    CP_OWNER_USER_CODE, CP_OWNER_CONFIG, CP_OWNER_FRAMEWORK, CP_OWNER_HARDWARE,
    CP_OWNER_INFRASTRUCTURE, CP_OWNER_NUMERIC, CP_OWNER_UNKNOWN,
    CP_OWNER_COUNT
} cp_owner;

typedef enum cp_phase {
    CP_PHASE_NONE = 0, /* no hint ("-") */
    CP_PHASE_INIT, CP_PHASE_MODEL_LOAD, CP_PHASE_FORWARD, CP_PHASE_BACKWARD,
    CP_PHASE_OPTIMIZER_STEP, CP_PHASE_CHECKPOINT_SAVE, CP_PHASE_CHECKPOINT_LOAD,
    CP_PHASE_EVAL, CP_PHASE_UNKNOWN,
    CP_PHASE_COUNT
} cp_phase;

typedef enum cp_role {
    CP_ROLE_NONE = 0,
    CP_ROLE_ROOT, CP_ROLE_CASCADE, CP_ROLE_CONTEXT, CP_ROLE_PROGRESS, CP_ROLE_PHASE,
    CP_ROLE_FRAME, CP_ROLE_TRACEBACK, CP_ROLE_IDENTITY, CP_ROLE_CULPRIT,
    CP_ROLE_CONCLUSION, /* no pattern: texts for a verdict the engine infers */
    CP_ROLE_LIBRARY,    /* a frame line of library code, not the user's */
    CP_ROLE_COUNT
} cp_role;

/* Spelling <-> value. The *_from_name functions return -1 for an unknown
 * name. */
const char *cp_kind_name(cp_kind k);
const char *cp_owner_name(cp_owner o);
const char *cp_phase_name(cp_phase p);
const char *cp_role_name(cp_role r);
int cp_kind_from_name(const char *s);
int cp_owner_from_name(const char *s);
int cp_phase_from_name(const char *s);
int cp_role_from_name(const char *s);

#endif
