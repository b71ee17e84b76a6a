// Algorithm registry: every collective's algorithms by name, each turning a CollectiveSpec into
// per-rank schedules (schedule.h). One file per algorithm under core/algorithms/.
//
//   for (const Algorithm* a : algorithms_for(OpKind::all_reduce)) std::cout << a->name();
//   Schedule s = build_schedule(spec, "ring", {.channels = 2});
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/schedule.h"

namespace twinccl {

struct AlgorithmParams {
  int channels = 1;                // parallel rings/trees the data is split over
  std::size_t chunk_elements = 0;  // pipelining chunk; 0 = one chunk per step
  int ranks_per_node = 0;          // for hierarchical/tree algorithms; 0 = all ranks in one node
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual std::string_view name() const = 0;         // "ring"
  virtual std::string_view description() const = 0;  // one line for `--algo help`
  virtual std::vector<OpKind> collectives() const = 0;
  // Empty when the algorithm applies to spec/params; otherwise why not (for the error message).
  virtual std::string why_not(const CollectiveSpec& spec, const AlgorithmParams& params) const;
  virtual RankSchedule generate(const CollectiveSpec& spec, const AlgorithmParams& params,
                                int rank) const = 0;
};

// Every registered algorithm, in registration order.
const std::vector<const Algorithm*>& all_algorithms();
std::vector<const Algorithm*> algorithms_for(OpKind kind);
// Every registered algorithm's name once, in registration order (what a forced name may be).
std::vector<std::string> algorithm_names();
// Throws InvalidArgument naming the algorithms that exist for `kind` when `name` is unknown or
// does not apply to spec (with the reason).
const Algorithm& find_algorithm(OpKind kind, std::string_view name);
// The algorithm the emulator uses when none is forced: "ring" where it exists, else "direct".
std::string_view default_algorithm(OpKind kind);

RankSchedule build_rank_schedule(const CollectiveSpec& spec, std::string_view algorithm,
                                 const AlgorithmParams& params, int rank);
Schedule build_schedule(const CollectiveSpec& spec, std::string_view algorithm,
                        const AlgorithmParams& params);

// Checks a schedule's structure: slices inside their buffers, sends and recvs pair up with equal
// counts, no rank waits forever. Throws InternalError describing the first problem.
void check_schedule(const Schedule& schedule);

// Ring facts shared by the ring schedules and the emulator's fast path (identical results).
struct ElementRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};
// Chunk c of `count` elements split over n ranks: [c*count/n, (c+1)*count/n).
ElementRange ring_chunk(std::size_t count, int nranks, int chunk);
// The k-th rank (k = 0..n-1) whose contribution the ring folds into chunk c:
// (c+1)%n first, then (c+2)%n, ..., c last: acc = x[c+1]; acc = acc op x[c+2]; ...
int ring_fold_rank(int nranks, int chunk, int k);

}  // namespace twinccl
