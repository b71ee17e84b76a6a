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
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "twinccl/trace/trace.h"

namespace twinccl::trace {

// Caps on what the importer reads (each refused with a ConfigError stating the cap). A file is
// streamed, so these bound time (about 10 s per GB on one core), not memory.
inline constexpr std::size_t kMaxTorchTraceBytes = std::size_t{4} << 30;     // one file's JSON
inline constexpr std::size_t kMaxTorchTraceFiles = 4096;                     // ranks of one job
inline constexpr std::size_t kMaxTorchTraceValues = std::size_t{256} << 20;  // JSON values / file

// One rank's profiler trace: its name (for messages) and its JSON text (decompressed).
struct TorchTraceText {
  std::string source;
  std::string text;
};

// One rank's profiler trace as a stream (a file, a gzip stream), read once and never held whole:
// memory is that of the events kept, not of the file.
struct TorchTraceStream {
  std::string source;
  std::unique_ptr<std::istream> in;  // the JSON text (decompressed)
};

struct TorchImportOptions {
  std::string program;  // free text stored in the trace
  // Build the ranks whose file is not given from the lowest given rank's file, for SPMD programs
  // where every rank issues the same collectives (docs/traces.md says when that is wrong). Only
  // for ops on the world, or on groups whose sibling groups follow from their ranks (evenly
  // strided blocks, replicated_group()); send/recv are refused. `twinccl import-torch-trace
  // --replicate-missing-ranks`.
  bool replicate_missing_ranks = false;
};

struct TorchImport {
  Trace trace;                     // one RankTrace per world rank; p2p_per_peer_streams set
  std::vector<std::string> notes;  // what was assumed or skipped, one line each
  int replicated_from = -1;        // the rank the missing ranks were built from; -1: none
  std::vector<int> replicated;     // the ranks built from it, ascending
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
TorchImport import_torch_traces(const std::vector<TorchTraceText>& files,
                                const TorchImportOptions& options);
// Streams: `open(i)` returns file i's stream, read to its end before the next is opened. What
// `twinccl import-torch-trace` uses.
TorchImport import_torch_trace_streams(std::size_t files,
                                       const std::function<TorchTraceStream(std::size_t)>& open,
                                       const TorchImportOptions& options);

// The members (world ranks, in group-rank order) of world rank `rank`'s counterpart of a process
// group that world rank `seen` belongs to with `members`, in a world of `world` ranks: the rule of
// replicate_missing_ranks. The world is its own counterpart; a group of one rank is {rank};
// otherwise the members must be s, s+d, ..., s+(g-1)d (d >= 1) with g*d dividing the world and s
// the first rank of `seen`'s block of g*d ranks plus `seen` mod d (contiguous tensor-parallel
// blocks, d = 1; strided data-parallel groups, d = the block below them), and the counterpart is
// the same pattern from `rank`'s block and offset. Returns false when the members follow no such
// rule (`why` says which part fails).
bool replicated_group(const std::vector<int>& members, int seen, int rank, int world,
                      std::vector<int>& out, std::string& why);

}  // namespace twinccl::trace
