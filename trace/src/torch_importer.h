// Internal to the PyTorch trace importer (torch_import.h): the job being built, one rank's file
// at a time (torch_import.cc), its missing ranks replicated on request (torch_replicate.cc).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "torch_read.h"
#include "twinccl/trace/torch_import.h"

namespace twinccl::trace::detail {

class Importer {
 public:
  explicit Importer(const TorchImportOptions& options)
      : replicate_(options.replicate_missing_ranks) {
    out_.trace.program = options.program;
  }

  // One rank's file: converted at once, so only its name stays (a job's files together are
  // gigabytes).
  void add(const TorchRankFile& f);  // ConfigError when it is not a rank of the same job

  // Replicates the missing ranks when asked (torch_replicate.cc), then checks the job.
  TorchImport finish();

 private:
  // The communicator of process group `pg_name` with these members; `where` names its first call.
  int comm_index(const std::string& pg_name, const std::string& label,
                 const std::vector<int>& ranks, const std::string& where);

  void replicate();

  void convert(const TorchRankFile& f);

  // The trace's caps on all ranks together, checked as ranks are added.
  void add_to_totals(std::size_t ops, std::size_t events, const std::string& who);

  // What a rank's conversion counted, for the notes.
  struct Counts {
    std::map<std::string, std::size_t> skipped;
    std::size_t roots_assumed = 0, without_kernel = 0;
    Counts operator-(const Counts& o) const {
      Counts d{{}, roots_assumed - o.roots_assumed, without_kernel - o.without_kernel};
      for (const auto& [k, n] : skipped) {
        const auto it = o.skipped.find(k);
        const std::size_t diff = n - (it == o.skipped.end() ? 0 : it->second);
        if (diff > 0) d.skipped[k] = diff;
      }
      return d;
    }
    void add(const Counts& o, std::size_t times) {
      for (const auto& [k, n] : o.skipped) skipped[k] += n * times;
      roots_assumed += o.roots_assumed * times;
      without_kernel += o.without_kernel * times;
    }
  };
  struct Origin {
    std::string pg_name, where;  // the group's name and its first call ("r0.json: traceEvents[4]")
  };

  bool replicate_;
  std::vector<detail::RankSource> files_;  // indexed by rank
  int world_ = -1, given_ = 0;
  std::string first_;  // the first file's name
  TorchImport out_;
  std::map<std::pair<std::string, std::vector<int>>, int> comms_;
  std::vector<Origin> origins_;  // per communicator
  Counts counts_, source_counts_;
  int source_rank_ = -1;                     // the lowest rank given
  std::vector<int> touched_, source_comms_;  // its communicators, in the order it used them
  std::string first_p2p_, source_p2p_;       // its first send/recv ("r0.json: ...[9] (send), op 4")
  std::size_t ops_ = 0, events_ = 0;
};

}  // namespace twinccl::trace::detail
