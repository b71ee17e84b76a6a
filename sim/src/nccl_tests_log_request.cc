// What `compare` and `calibrate` take from a log's rows (nccl_tests_log.h): each row's size
// checked against its count, the nodes a log's ranks span on a topology, the NCCL version's code,
// and the request that prices a row.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <set>

#include "nccl_tests_log_parts.h"
#include "nccl_tuning_table.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim {

namespace {

// How nccl-tests prints a collective's size: count x the type's bytes (whole), or that times the
// ranks where count is per rank. NVIDIA/nccl-tests v2.19.6 src/common.cu (setupArgs, TimeTest)
// prints max(send, receive count) x the type's bytes as the size and the count one call takes;
// the *GetCollByteCount of src/all_gather.cu, reduce_scatter.cu, alltoall.cu, gather.cu and
// scatter.cu make one buffer nranks times that count. nullopt for a table without an OpKind
// (sendrecv, hypercube), which may be either.
std::optional<bool> count_is_per_rank(const std::optional<OpKind>& kind) {
  if (!kind) return std::nullopt;
  switch (*kind) {
    case OpKind::all_gather:
    case OpKind::reduce_scatter:
    case OpKind::all_to_all:
    case OpKind::gather:
    case OpKind::scatter:
      return true;
    default:
      return false;
  }
}

}  // namespace

void check_row_size(const NcclTestsTable& table, const NcclTestsRow& row) {
  if (row.count == 0) return;
  const std::size_t element_bytes = size_of(row.dtype);
  const auto ranks = static_cast<std::size_t>(std::max(1, table.ranks));
  // By division: count x bytes x ranks overflows 2^64 at count 2^50 on 2^20 ranks.
  const auto is_times = [&](std::size_t factor) {
    return row.size_bytes % factor == 0 && row.size_bytes / factor == row.count;
  };
  // The table's collective says which of the two it prints: a garbled all_to_all row whose count
  // is the whole buffer's would be priced with a count ranks times too large.
  const std::optional<bool> per_rank = count_is_per_rank(table.kind);
  if ((per_rank != true && is_times(element_bytes)) ||
      (per_rank != false && is_times(element_bytes * ranks))) {
    return;
  }
  const double elements_bytes = static_cast<double>(row.count) * static_cast<double>(element_bytes);
  const std::string expected =
      !per_rank ? fmt::format("{:.0f} bytes, or {:.0f} on {} ranks", elements_bytes,
                              elements_bytes * static_cast<double>(ranks), ranks)
      : *per_rank
          ? fmt::format("{:.0f} bytes on {} ranks: {} prints the count per rank",
                        elements_bytes * static_cast<double>(ranks), ranks, table.collective)
          : fmt::format("{:.0f} bytes: {} prints the whole buffer's count", elements_bytes,
                        table.collective);
  nccl_tests::fail(
      table.source, row.line,
      fmt::format("size {} and count {} {} contradict each other ({} elements of {} bytes are "
                  "{}); fix or remove the row{}",
                  row.size_bytes, row.count, name(row.dtype), row.count, element_bytes, expected,
                  per_rank == true ? ", or give the run's rank count with --ranks" : ""));
}

int nodes_spanned(const topo::Topology& topology, int ranks) {
  std::set<int> nodes;
  for (int r = 0; r < ranks; ++r) nodes.insert(topology.vertex(topology.gpu(r)).node);
  return static_cast<int>(nodes.size());
}

std::string nvlink_domain_hint(const NcclTestsTable& log, int spanned) {
  if (spanned <= 0 || spanned >= log.nodes) return "";
  const bool tray_sized = log.ranks > 0 && log.ranks <= 4 * log.nodes;  // NVL72: 4 GPUs a tray
  const bool grace_blackwell = log.gpu_name.find("GB200") != std::string::npos ||
                               log.gpu_name.find("GB300") != std::string::npos;
  if (!tray_sized && !grace_blackwell) return "";
  return fmt::format(
      "; if its hosts share NVLink domains (a GB200 / GB300 NVL72 tray is a host of 4 GPUs, its "
      "rack one NVLink domain, a node of the gb200-nvl72 presets), give --nodes {}: the domains "
      "they span",
      spanned);
}

namespace {

// major x 10000 + minor x 100 + patch of a version starting "major.minor.patch" (each part at most
// 4 digits, minor and patch at most 99), whatever its range; nullopt when it does not.
std::optional<long> version_code_unchecked(std::string_view version) {
  std::array<int, 3> parts{};
  const char* at = version.data();
  const char* end = version.data() + version.size();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      if (at == end || *at != '.') return std::nullopt;
      ++at;
    }
    const auto [next, ec] = std::from_chars(at, end, parts[i]);
    if (ec != std::errc() || next == at || next - at > 4 || parts[i] < 0) return std::nullopt;
    at = next;
  }
  const auto [major, minor, patch] = parts;
  if (minor > 99 || patch > 99) return std::nullopt;
  return major * 10000L + minor * 100L + patch;  // each part at most 4 digits
}

// "2.27.7" of a code of the tuning model's range (kNcclVersionCodeMin..Max).
std::string version_name(int code) {
  return nccl_tests::nccl_version_of_code(static_cast<unsigned long long>(code)).value_or("");
}

// The oldest NCCL whose ranking is the newest model's: the last `*_since` of the version terms.
constexpr int newest_model_since() { return detail::kNcclVersionTerms.newest_model_since(); }

// The code that prices a table of version code `code` (version_code_unchecked): its own, the
// oldest model's for a version older than it, else 0 (the newest model).
int priced_version_code(std::optional<long> code) {
  if (code && *code < detail::kNcclVersionCodeMin) return detail::kNcclVersionCodeMin;
  return code && *code <= detail::kNcclVersionCodeMax ? static_cast<int>(*code) : 0;
}

}  // namespace

int nccl_version_code(std::string_view version) {
  const std::optional<long> code = version_code_unchecked(version);
  return code && *code >= detail::kNcclVersionCodeMin && *code <= detail::kNcclVersionCodeMax
             ? static_cast<int>(*code)
             : 0;
}

NcclVersionPricing nccl_version_pricing(const NcclTestsTable& table) {
  const std::optional<long> code = version_code_unchecked(table.nccl_version);  // read once
  NcclVersionPricing p{priced_version_code(code), ""};
  if (table.nccl_version.empty()) return p;
  const bool rccl = table.nccl_version_library == "RCCL";
  // The source as fail() shows it: printable, bounded.
  const std::string source = nccl_tests::shown(table.source, 200);
  const std::string where = table.nccl_version_line > 0
                                ? fmt::format("{}:{}", source, table.nccl_version_line)
                                : fmt::format("{} (its nccl_version)", source);
  const std::string version = fmt::format("{} version {}", rccl ? "RCCL" : "NCCL",
                                          nccl_tests::shown(table.nccl_version, 40));
  if (code && *code >= detail::kNcclVersionCodeMin && *code <= detail::kNcclVersionCodeMax) {
    // RCCL x.y.z is NCCL x.y.z's code with AMD's kernels and tuning (nccl_tests_log_version.cc):
    // said, so that an AMD log's rows are not taken for NVIDIA NCCL's.
    if (rccl) {
      p.note = fmt::format(
          "{} at {} is priced as NCCL {}, the NCCL release it tracks (RCCL's own tuning terms "
          "where the model has them)",
          version, where, version_name(p.code));
    }
    return p;
  }
  const std::string newest =
      fmt::format("the newest model (NCCL {} and later)", version_name(newest_model_since()));
  if (code && *code < detail::kNcclVersionCodeMin) {
    const std::string oldest = version_name(p.code);
    p.note = fmt::format("{} at {} is older than the oldest tuning model ({}); priced as {}",
                         version, where, oldest, oldest);
  } else if (code) {
    p.note =
        fmt::format("{} at {} is past NCCL's version codes; priced as {}", version, where, newest);
  } else {
    p.note = fmt::format("unreadable {} '{}' at {}; priced as {}",
                         rccl ? "RCCL version" : "NCCL version",
                         nccl_tests::shown(table.nccl_version, 40), where, newest);
  }
  return p;
}

Request request_of(const NcclTestsTable& table, const NcclTestsRow& row, bool in_place) {
  Request request;
  request.spec.kind = table.kind.value();
  request.spec.nranks = table.ranks;
  request.spec.count = row.count;
  // A root past the table's ranks is an impossible row, refused as a size that contradicts its
  // count is (check_row_size), not priced as root 0.
  if (row.root >= table.ranks) {
    nccl_tests::fail(table.source, row.line,
                     fmt::format("root {} is not one of the table's {} ranks (0..{}); fix or "
                                 "remove the row, or give the run's rank count with --ranks",
                                 row.root, table.ranks, table.ranks - 1));
  }
  request.spec.root = std::max(0, row.root);
  request.dtype = row.dtype;
  // nccl-tests times the host side too: each GPU's launch, one thread launching nGpus of them.
  request.gpus_per_thread = std::max(1, table.gpus_per_thread);
  // The log's NCCL ranks as its own version's tuning model did (0: not printed, the newest); one
  // older than the model's oldest as the oldest, an unreadable one as the newest (with a note).
  request.nccl_version = priced_version_code(version_code_unchecked(table.nccl_version));
  // Only a one-rank call depends on these (NCCL's copy, nothing in place, a scaling kernel for
  // avg / mulsum): Prediction::one_rank.
  request.in_place = in_place;
  if (row.redop == "avg") request.op = ReduceKind::avg;
  if (row.redop == "mulsum") request.op = ReduceKind::premul_sum;
  // What NCCL ran at this size, where its own per-call lines said (nccl_ran_choice.h): the row is
  // priced as it ran, whatever the simulator's reading of NCCL's ranking would pick.
  if (!row.ran_algorithm.empty()) {
    request.algorithm = row.ran_algorithm;
    request.protocol = parse_protocol(row.ran_protocol);
  }
  return request;
}

}  // namespace twinccl::sim
