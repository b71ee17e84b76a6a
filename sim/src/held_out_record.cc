// held_out_record.h: the analytic model's record on held-out published figures, per class.
#include "twinccl/sim/held_out_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "twinccl/sim/nccl_tests_log.h"

namespace twinccl::sim {
namespace {

// Preset name prefixes and the class of a run that spans several nodes / one node of them.
struct Family {
  std::string_view prefix, several_nodes, one_node;
};
constexpr std::array<Family, 21> kFamilies{{
    {"gb200-nvl72", "nvl72", "nvl72"},
    {"gb300-nvl72", "nvl72", "nvl72"},
    {"aws-", "aws-efa", "nvswitch-1node"},
    {"gcp-a3mega-", "gcp-tcpxo", "nvswitch-1node"},
    {"gcp-a3high-", "gcp-tcpxo", "nvswitch-1node"},
    {"gcp-a4-", "roce-nvidia", "nvswitch-1node"},
    {"oci-a100-", "roce-nvidia", "nvswitch-1node"},
    {"oci-h100-", "roce-nvidia", "nvswitch-1node"},
    {"azure-ndv5-", "ib-multinode", "nvswitch-1node"},
    {"h100-cluster-", "ib-multinode", "nvswitch-1node"},
    {"h200-cluster-", "ib-multinode", "nvswitch-1node"},
    {"b200-cluster-", "ib-multinode", "nvswitch-1node"},
    {"h100x", "ib-multinode", "nvswitch-1node"},
    {"h200x", "ib-multinode", "nvswitch-1node"},
    {"b200x", "ib-multinode", "nvswitch-1node"},
    {"b300-cluster-", "ib-multinode", "nvswitch-1node"},
    {"b300x", "ib-multinode", "nvswitch-1node"},
    {"dgx-", "ib-multinode", "nvswitch-1node"},
    {"mi300x-", "amd-multinode", "amd-1node"},  // mi300x-8, mi300x-cluster-N, mi300x-roce-N
    {"mi325x-roce-", "amd-multinode", "amd-1node"},
    {"mi355x-roce-", "amd-multinode", "amd-1node"},
}};

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// "45 of 80 at >= 64 MiB were within 10%", or that none was judged there.
std::string share(int within, int judged, std::string_view where, int band_percent) {
  if (judged == 0) return fmt::format("none {} was judged", where);
  return fmt::format("{} of {} {} {} within {}%", within, judged, where,
                     within == 1 ? "was" : "were", band_percent);
}

}  // namespace

const std::vector<HeldOutRecord>& held_out_records() {
  // tests/fidelity/test_figures.cc computes these from tests/fidelity/figures/*.csv and fails,
  // printing the lines to put here, when they differ.
  static const std::vector<HeldOutRecord> records{
      {"nvswitch-1node", 45, 52, 19, 25, 21, 27, 0},
      {"amd-1node", 15, 15, 12, 14, 9, 9, 0},
      {"amd-multinode", 21, 22, 4, 8, 4, 6, 5},
      {"aws-efa", 58, 94, 8, 10, 19, 26, 3},
      {"gcp-tcpxo", 7, 12, 1, 1, 4, 6, 0},
      {"roce-nvidia", 20, 26, 3, 4, 4, 4, 0},
      {"ib-multinode", 56, 84, 6, 6, 6, 7, 0},
      {"nvl72", 29, 40, 2, 4, 9, 13, 4},
      {"one-gpu", 1, 1, 0, 0, 1, 1, 0},
  };
  return records;
}

std::optional<std::string> machine_class_of(std::string_view preset, int nodes, int ranks) {
  // A file (a calibrated topology too) is not the preset whose name it may start with.
  if (preset.find('/') != std::string_view::npos || ends_with(preset, ".json") ||
      ends_with(preset, ".xml"))
    return std::nullopt;
  for (const Family& f : kFamilies) {
    if (preset.substr(0, f.prefix.size()) != f.prefix) continue;
    if (ranks == 1) return std::string("one-gpu");
    return std::string(nodes > 1 ? f.several_nodes : f.one_node);
  }
  return std::nullopt;
}

std::string held_out_note(std::string_view preset, const topo::Topology& topology, int ranks,
                          bool edited) {
  const std::optional<std::string> cls =
      machine_class_of(preset, nodes_spanned(topology, ranks), ranks);
  if (!cls) return "";
  const auto& records = held_out_records();
  const auto r = std::find_if(records.begin(), records.end(),
                              [&](const HeldOutRecord& h) { return h.machine_class == *cls; });
  if (r == records.end()) return "";
  return fmt::format(
      "held out: of the published {} figures the analytic model was not fitted to, {} and {}; {} "
      "{} off by more than 2x (docs/fidelity.md{}). Fit it to your own nccl-tests logs: "
      "`twinccl calibrate`",
      *cls, share(r->large_within, r->large, "at >= 64 MiB", 10),
      share(r->small_within, r->small, "below 1 MiB", 25), r->off_by_2x,
      r->off_by_2x == 1 ? "was" : "were", edited ? "; the unedited preset's record" : "");
}

}  // namespace twinccl::sim
