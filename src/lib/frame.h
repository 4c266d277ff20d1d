/* frame.h - line attribution: which host / rank / pid / time wrote a line.
 *
 * Launchers and libraries stack prefixes in front of a message, outermost
 * first: Slurm `srun -l` ("12: "), pdsh and DeepSpeed's multi-node runner
 * ("node017: "), MPI ("[1,3]<stderr>:"), torchrun's tee ("[default3]:"),
 * PyTorch's C++ "[rank3]:", a glog header ("E1206 18:44:12.715298746 1234
 * file.cpp:607]"), process-group tags ("[PG 0 (default_pg) Rank 3]"),
 * NCCL ("host:pid:tid [dev] NCCL INFO"), DeepSpeed ("[2024-01-01
 * 12:00:00,123] [INFO] [file.py:96:fn]"), Python logging, ISO 8601, dmesg
 * and syslog. cp_frame_parse peels them off one by one.
 */
#ifndef CULPRIT_FRAME_H
#define CULPRIT_FRAME_H

#include <stddef.h>
#include "origin.h"

/* Fills `out` with what the path says about the writer of every line in
 * it: "rank_27.log" / "rank27" -> rank 27, a folder "node003" or a host
 * looking directory name -> host, torchrun --log_dir trees
 * ".../attempt_0/3/stderr.log" -> local rank 3. `out` must be initialised;
 * only fields the path reveals are written. */
void cp_frame_from_path(const char *path, cp_origin *out);

/* Parses the stacked prefixes of one line (no trailing newline needed;
 * '\r' and '\n' at the end are ignored). Fields found are written into
 * `out` (which the caller initialises, typically with the path's origin);
 * fields not found are left as they were. Rank tags inside the first part
 * of the message ("[PG ID 0 PG GUID 0(default_pg) Rank 1]", "[Rank 3]",
 * "[RANK 1]", "[rank 1/4]", "rank 2 |") are recognised as well.
 * Returns the offset of the message body: the first byte after the leading
 * prefixes (0 when there are none). Never reads beyond line[len-1]. */
size_t cp_frame_parse(const char *line, size_t len, cp_origin *out);

/* Parses a timestamp at the start of s (any format cp_frame_parse knows,
 * also torchelastic's "2026-11-29_16:19:33"). Returns the number of bytes
 * consumed, 0 if none. */
size_t cp_time_parse(const char *s, size_t len, cp_time *out);

#endif
