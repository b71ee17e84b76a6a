// Internal to the PyTorch trace importer (torch_import.h): one rank's profiler trace, read into
// what the importer uses (torch_read.cc), and the GPU timeline turned into events
// (torch_timeline.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "twinccl/trace/trace.h"

namespace twinccl::trace::detail {

// One `record_param_comms` CPU op: a call of a torch.distributed collective or send/recv.
struct TorchCommCall {
  std::size_t event = 0;  // index in traceEvents, for messages
  double ts_us = 0, dur_us = 0;
  std::int64_t external_id = -1;  // -1: absent
  std::string collective;         // "Collective name": "allreduce", "_allgather_base", ...
  std::string dtype;              // "Float", "BFloat16", ...
  std::uint64_t in_nelems = 0, out_nelems = 0;
  std::vector<std::uint64_t> in_split, out_split;  // "In/Out split size" (rows of dim 0)
  bool split_truncated = false;                    // the profiler cut a list past 30 entries
  std::int64_t group_size = -1;                    // -1: absent
  std::string pg_name, pg_desc;                    // "Process Group Name" (or "ID"), "Description"
  std::vector<int> pg_ranks;                       // "Process Group Ranks" (world ranks)
  bool pg_ranks_known = false;                     // present, non-empty and not truncated
  std::int64_t global_start = -1, global_stride = -1;
  std::int64_t rank_field = -1;  // "Rank": own group rank, the root, or the p2p peer's group rank
  std::int64_t src_rank = -1, dst_rank = -1;  // "Src Rank"/"Dst Rank": the p2p peer (world rank)
};

// One GPU activity: a kernel, memcpy or memset.
struct GpuActivity {
  double start_us = 0, end_us = 0;
  std::int64_t stream = -1;
  std::int64_t external_id = -1;
  bool kernel = false;  // cat "kernel" (else a memcpy or memset)
  bool nccl = false;    // an NCCL kernel (ncclKernel_* / ncclDevKernel_*)
};

struct TorchRankFile {
  std::string source;
  int rank = -1, world_size = -1;
  std::vector<TorchCommCall> calls;  // in issue (CPU start) order
  std::vector<GpuActivity> gpu;
};

TorchRankFile read_torch_rank(const std::string& source, const std::string& text);
// The same from a stream (a file, a gzip stream): read once, never held whole.
TorchRankFile read_torch_rank(const std::string& source, std::istream& in);

// A rank's ops and their times on the rank's timeline: issue (the NCCL kernel's start, or the
// call's CPU start without one) and done (the kernel's end, or the issue). The events: issues and
// waits in time order, the compute stream's busy time between them as compute (the rules in
// torch_timeline.cc).
struct OpTimes {
  double issue_us = 0, done_us = 0;
  bool has_kernel = false;
  bool async = false;  // its kernel ran on a stream that ran no other kernel
};
// call_of_op[i]: the call (index into file.calls) that op i of the rank is; times gets one entry
// per op.
std::vector<TraceEvent> timeline_events(const TorchRankFile& file,
                                        const std::vector<std::size_t>& call_of_op,
                                        std::vector<OpTimes>& times);

// What a call is in TwinCCL's terms (torch_ops.cc): kind, NCCL's count, dtype, root, peer and
// per-rank counts, on a communicator of `ranks` (world ranks) where this rank is `me`. Returns
// false for a call that is no operation ("wait", names TwinCCL does not know: `skipped` says
// which); throws ConfigError naming `where` and the field for a call it cannot take over.
// `root_assumed` is set when a rooted call did not say its root (root 0 is used).
bool op_of_call(const TorchCommCall& call, const std::vector<int>& ranks, int me,
                const std::string& where, TraceOp& op, std::string& skipped, bool& root_assumed);

// A file's name and rank, for messages.
struct RankSource {
  std::string source;
  int rank = -1;
  bool given = false;
};
// The files are one job (torch_agree.cc): ConfigError naming both files otherwise. `files` is
// indexed by rank.
void check_collectives(const Trace& t, const std::vector<RankSource>& files);
void check_p2p(const Trace& t, const std::vector<RankSource>& files);
// The world ranks of the call's process group (torch_groups.cc): "Process Group Ranks", or the
// world when that list is absent or cut short and the group is the whole world, or "Global rank
// start/stride"; ConfigError naming `where` when they cannot be told or are not valid.
std::vector<int> members_of(const TorchCommCall& c, int world, const std::string& where);
// "1-3, 5, 7-63" (ascending ranks; past 8 ranges, "...")
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace twinccl::trace::detail
