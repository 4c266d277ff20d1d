/* frdump.h - PyTorch Flight Recorder dumps: reading them and what they say.
 *
 * Each rank's ProcessGroupNCCL keeps a ring buffer of its last collectives
 * and writes it on a watchdog timeout (TORCH_NCCL_DUMP_ON_TIMEOUT=1) to
 * <prefix><rank>, as a pickle (the default) or as JSON. This module reads
 * both, for the format versions PyTorch has shipped (2.0 to 2.10: the keys
 * of torch/csrc/distributed/c10d/FlightRecorder.hpp), aligns the entries
 * of all dumps by process group and collective sequence number, and finds
 * per group the first collective that some member never enqueued, or that
 * members ran with a different type, size, dtype or state.
 *
 * The findings come back as text lines ("[rank17]: [flight-recorder] rank
 * 17 never joined collective #1580 ..."), which the caller feeds to the
 * incident as one more stream: rules/80-flight-recorder.rules turns them
 * into events like any log line, so the verdict weighs dumps and logs
 * together and the texts live in the rule catalog.
 */
#ifndef CULPRIT_FRDUMP_H
#define CULPRIT_FRDUMP_H

#include <stdbool.h>
#include <stddef.h>

enum {
    CP_FR_MAX_FILE = 256 << 20 /* bytes of one dump read */
};

typedef struct cp_frset cp_frset;

/* True when the first bytes of a file look like a Flight Recorder dump:
 * a pickle (protocol 2-5) or a JSON object naming its keys. */
bool cp_fr_sniff(const unsigned char *head, size_t len);

/* An empty set of dumps; caller frees with cp_frset_free. NULL on no memory. */
cp_frset *cp_frset_new(void);
void cp_frset_free(cp_frset *set);

/* Parses one dump and keeps what the analysis needs. Returns 0, or -1
 * with a message in `err` (the dump is then ignored). */
int cp_frset_add(cp_frset *set, const char *path, const unsigned char *data, size_t len, char *err,
                 size_t err_len);
size_t cp_frset_count(const cp_frset *set);

/* The findings as log lines, each ending in '\n' (caller frees; "" when
 * there are none, NULL on no memory). `world` gets the number of ranks
 * the process groups name (0 unknown). */
char *cp_frset_findings(const cp_frset *set, int *world);

#endif
