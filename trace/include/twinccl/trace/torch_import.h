// A PyTorch job's communication as a trace: the profiler traces of a real run (torch.profiler /
// Kineto `export_chrome_trace`, one JSON file per rank) turned into a twinccl-trace that
// sim::replay plays on any topology (docs/traces.md, "From a PyTorch profiler trace").
//
//   std::vector<trace::TorchTraceText> files = {{"rank0.json", text0}, {"rank1.json", text1}};
//   trace::TorchImport job = trace::import_torch_traces(files);   // ConfigError naming file/field
//   sim::check_trace(job.trace);  sim::save_trace(job.trace, "job.trace.json");
//
// What is read: the top-level "distributedInfo" (rank, world_size); every CPU op
// `record_param_comms` ("Collective name", "dtype", "In/Out msg nelems", "In/Out split size",
// "Group size", "Process Group Name"/"ID"/"Description"/"Ranks", "Global rank start/stride",
// "Rank", "Src/Dst Rank"); the GPU timeline (NCCL kernels tied to their call by "External id",
// other kernels, memcpy and memset with their "stream"). Everything else is ignored.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "twinccl/trace/trace.h"

namespace twinccl::trace {

// Caps on what the importer reads (each refused with a ConfigError stating the cap).
inline constexpr std::size_t kMaxTorchTraceBytes = std::size_t{512} << 20;  // one file's JSON
inline constexpr std::size_t kMaxTorchTraceFiles = 4096;                    // ranks of one job
inline constexpr std::size_t kMaxTorchTraceValues = std::size_t{64} << 20;  // JSON values / file

// One rank's profiler trace: its name (for messages) and its JSON text (decompressed).
struct TorchTraceText {
  std::string source;
  std::string text;
};

struct TorchImport {
  Trace trace;                     // one RankTrace per world rank; p2p_per_peer_streams set
  std::vector<std::string> notes;  // what was assumed or skipped, one line each
};

// Reads every rank's file and builds the trace: per rank, the collectives and send/recv in the
// order the CPU issued them, compute between them from the GPU timeline, one communicator per
// process group. The files must be one job: one file per rank of the same world size, and every
// communicator's collectives in the same order with the same kind, count and dtype on every
// member. Anything else throws ConfigError naming the file, the rank, the op and the field
// ("b.json (rank 1): op 3 (all_reduce #3 on comm 'default_pg'): count 1024, where a.json (rank
// 0) has 2048"). sim::check_trace (the replay's own checks) is for the caller to run.
TorchImport import_torch_traces(const std::vector<TorchTraceText>& files,
                                const std::string& program = "");
// The same, one file at a time: `read(i)` returns file i (i < files), which is converted before
// the next is read, so a job's files need not fit in memory together.
TorchImport import_torch_traces(std::size_t files,
                                const std::function<TorchTraceText(std::size_t)>& read,
                                const std::string& program = "");

}  // namespace twinccl::trace
