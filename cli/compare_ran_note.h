// `twinccl compare`'s note on rows priced as NCCL ran them (its per-call lines,
// twinccl/sim/nccl_ran_choice.h), and where that differs from the simulator's own choice:
//
//   note: priced as NCCL ran each size (its NCCL_DEBUG_SUBSYS=TUNING lines, from run.log line
//   40): 16 of 16 rows; the simulator's own choice differs at 9: 512 KiB - 32 MiB ran ring/LL128
//   (the simulator's: nvls_tree/Simple), 1 GiB - 16 GiB ran ring/Simple (nvls_tree/Simple)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::cli {

struct RanRow {
  std::size_t size_bytes = 0;
  std::string ran, own;  // "ring/LL128": what NCCL ran, what the simulator's choice is
};

// "" when no row was priced as it ran and none conflicted. `from`: where the first line was;
// `rows`: the table's rows; `conflicting`: sizes whose lines disagreed (priced by NCCL's choice);
// `forced`: --algo / --proto forced the pair, so the lines of `ran` rows were not used.
std::string ran_choice_note(const std::vector<RanRow>& ran, std::size_t rows,
                            const std::string& from, int conflicting, bool forced);

// A row priced with NCCL's choice (no per-call line) and off by more than 10%: the NCCL
// algorithms whose own prediction of it is within 10% of the measured time.
struct OffRow {
  std::size_t size_bytes = 0;
  std::string chosen;                // the simulator's choice's algorithm ("nvls_tree")
  std::vector<std::string> fitting;  // NCCL algorithms within 10% ("ring", "tree")
};
// The row `request` priced `p` with NCCL's choice, measured `measured_us`: nullopt within 10%,
// else an OffRow with the NCCL algorithms whose analytic price is within 10% of it.
std::optional<OffRow> off_row(const topo::Topology& topology, const sim::Request& request,
                              const sim::Prediction& p, double measured_us, std::size_t size_bytes);

// look_alike_note for a log table priced as `calibrate` prices it (request_of, NCCL's choice, the
// out-of-place column) on `topology`; "" where the table's NCCL_ALGO / NCCL_PROTO restrict the
// choice or its rows say what ran.
std::string look_alike_for(const topo::Topology& topology, const sim::NcclTestsTable& table);

// Where one NCCL algorithm other than the simulator's choice fits at least 60% of the rows off
// by more than 10% (and 3 or more of them): a note saying NCCL may have run it there and how to
// see what it ran (its per-call lines); "" otherwise. `rows`: the table's rows.
std::string look_alike_note(const std::vector<OffRow>& off, std::size_t rows);

// "512 KiB", "16 GiB", "8 B": a size as a note shows it.
std::string short_size(std::size_t bytes);

}  // namespace twinccl::cli
