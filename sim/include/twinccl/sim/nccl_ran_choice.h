// What NCCL ran for each size of an nccl-tests run, read from NCCL's own per-call lines, so that
// `compare` and `calibrate` price a row with the algorithm and protocol it ran rather than with
// the simulator's reading of NCCL's ranking.
//
//   // NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING all_reduce_perf ...   (or NCCL_DEBUG_FILE=...)
//   std::vector<sim::NcclRanChoice> c = sim::read_nccl_ran_choices(debug_text, "nccl.h0.77.log");
//   sim::apply_nccl_ran_choices(table, c);   // rows: ran_algorithm "ring", ran_protocol "ll128"
//
// NCCL writes one line per collective call on rank 0 with NCCL_DEBUG=INFO and
// NCCL_DEBUG_SUBSYS=TUNING (or ALL), in three forms (NVIDIA/nccl, read, not copied):
//   2.24 on   "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}"
//             (v2.24.3-1 src/enqueue.cc:678; v2.30.7-1 the same): bytes = NCCL's count x the type's
//             size, NCCL's count being per rank for AllGather / ReduceScatter;
//   2.23      "AllReduce: 1048576 Bytes -> Algo 1 proto 1 time 23.4" (v2.23.4-1 getAlgoInfo);
//   2.20-2.22 "1048576 Bytes -> Algo 1 proto 1 time 23.4" (v2.20.5-1 enqueue.cc:1498, v2.22.3-1
//             getAlgoInfo): bytes = the largest buffer (x nRanks for AllGather / ReduceScatter:
//             v2.20.5-1 src/include/info.h:88, v2.22.3-1 ncclFuncMaxSendRecvCount), which is
//             nccl-tests' size; algorithms and protocols by number (src/include/nccl_common.h:
//             TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6;
//             LL 0, LL128 1, SIMPLE 2).
// Before 2.20 NCCL printed no such line (a TRACE build only). Each line comes after the usual
// "host:pid:tid [dev] NCCL INFO " prefix. A row gets the choice of the lines whose bytes are its
// size in the line's form; sizes two lines name with different choices (`-d all` / `-o all`
// tables whose rows share a size) keep none.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/sim/nccl_tests_log.h"

namespace twinccl::sim {

struct NcclRanChoice {
  std::string function;   // twinccl's collective ("all_reduce"); "" = the line names none
  std::size_t bytes = 0;  // as the line printed it
  // true: bytes = NCCL's count x the type's size (2.24 on); false: nccl-tests' size (before)
  bool nccl_count_bytes = true;
  // twinccl's names: tree, ring, nvls, nvls_tree, pat, collnet_direct, collnet_chain; ll, ll128,
  // simple
  std::string algorithm, protocol;
  std::string from;  // "<source> line N"
};

// The choice one line gives ("host:1:2 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL
// channel{Lo..Hi}={0..0}"), nullopt for any other line (and for a name NCCL prints for an
// algorithm it does not know, "Unknown").
std::optional<NcclRanChoice> nccl_ran_choice(std::string_view line, std::string_view source,
                                             int line_no);

// Every choice line of a text (an NCCL_DEBUG_FILE, or a log), in order. ConfigError naming the
// source for a text over kNcclTestsMaxBytes or a line over kNcclTestsMaxLineBytes.
std::vector<NcclRanChoice> read_nccl_ran_choices(std::string_view text, std::string_view source);

struct RanChoicesApplied {
  int named = 0;  // rows whose size the choices name (with a choice already or not)
  int rows = 0;   // rows that got a choice (those named with two keep none:
                  // NcclTestsTable::ran_conflicting counts them)
};
// Sets ran_algorithm / ran_protocol / ran_from of every row of `table` (whose collective is known)
// whose size the choices name for its collective (a choice naming no collective counts for any),
// keeping a choice a row already has from the log itself. A row NCCL ran with CollNet (SHARP),
// which the model has none of, is moved to the table's skipped lines saying so.
RanChoicesApplied apply_nccl_ran_choices(NcclTestsTable& table,
                                         const std::vector<NcclRanChoice>& choices);

}  // namespace twinccl::sim
