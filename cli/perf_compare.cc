// `twinccl perf --compare` lines. How it works: sim::compare_all times every applicable pair as
// the call runs (the channels NCCL launches, the pipeline fills, the host launch) and marks
// the tuner's choice, which ranks NCCL's own algorithms as NCCL does (its tuning model on all
// channels, without the fills: Choice::rank_us). The two orders can differ; the line keeps the
// times as run (what forcing NCCL_ALGO/NCCL_PROTO would give) and marks the choice, and a note
// names the faster NCCL pair with both rankings, so the table and perf's algorithm column agree.
#include "perf_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "twinccl/sim/selection.h"

namespace twinccl::cli {
namespace {

std::string pair_name(const sim::Prediction& p) {
  return sim::label(p);  // "ring/LL"; one rank: "one_rank/copy" (NCCL runs no algorithm)
}

}  // namespace

std::string compare_legend() {
  return "# * = the tuner's choice, NCCL's (perf's algorithm column): NCCL ranks its own\n"
         "#   algorithms by its tuning model, on all channels, without the NVLS and tree\n"
         "#   pipeline fills; the times are as the call runs (channels launched, fills, host\n"
         "#   launch): a row above * is what forcing it would give; direct, halving_doubling,\n"
         "#   bruck and hierarchical are what-if schedules; where a rule chooses in NCCL's\n"
         "#   place (RCCL's MSCCL, aws-ofi-nccl's region tuner) the note under * names it\n";
}

std::string compare_size_line(std::size_t bytes, const std::vector<sim::Prediction>& rows) {
  std::string line = fmt::format("  {:>12}", bytes);
  const sim::Prediction* chosen = nullptr;
  const sim::Prediction* faster = nullptr;  // the fastest NCCL pair that runs faster than *
  for (const sim::Prediction& p : rows) {
    line += fmt::format("  {} {:.1f}{}", pair_name(p), p.time_us, p.tuner_choice ? "*" : "");
    if (p.tuner_choice) chosen = &p;
    if (!chosen && !faster && !sim::nccl_algorithm_name(p.algorithm).empty()) faster = &p;
  }
  line += "\n";
  if (!chosen || !faster || faster->time_us >= chosen->time_us) return line;
  if (!chosen->chosen_by.empty()) {  // not NCCL's ranking: say who chose it
    return line + fmt::format(
                      "  {:>12}  * {}: chosen by {} in NCCL's place; as run {} is {:.1f}% faster "
                      "(NCCL_ALGO={} NCCL_PROTO={})\n",
                      "", pair_name(*chosen), chosen->chosen_by, pair_name(*faster),
                      100.0 * (1.0 - faster->time_us / chosen->time_us),
                      sim::nccl_algorithm_name(faster->algorithm), sim::name(faster->protocol));
  }
  line += fmt::format(
      "  {:>12}  * {}: NCCL's model ranks it {:.1f} us, {} {:.1f} us; as run {} is {:.1f}% faster "
      "(NCCL_ALGO={} NCCL_PROTO={})\n",
      "", pair_name(*chosen), chosen->rank_us, pair_name(*faster), faster->rank_us,
      pair_name(*faster), 100.0 * (1.0 - faster->time_us / chosen->time_us),
      sim::nccl_algorithm_name(faster->algorithm), sim::name(faster->protocol));
  return line;
}

}  // namespace twinccl::cli
