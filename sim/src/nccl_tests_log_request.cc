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

void check_row_size(const NcclTestsTable& table, const NcclTestsRow& row) {
  if (row.count == 0) return;
  const std::size_t element_bytes = size_of(row.dtype);
  const auto ranks = static_cast<std::size_t>(std::max(1, table.ranks));
  // By division: count x bytes x ranks overflows 2^64 at count 2^50 on 2^20 ranks.
  const auto is_times = [&](std::size_t factor) {
    return row.size_bytes % factor == 0 && row.size_bytes / factor == row.count;
  };
  if (is_times(element_bytes) || is_times(element_bytes * ranks)) return;
  const double elements_bytes = static_cast<double>(row.count) * static_cast<double>(element_bytes);
  nccl_tests::fail(
      table.source, row.line,
      fmt::format("size {} and count {} {} contradict each other ({} elements of {} bytes are "
                  "{:.0f} bytes, or {:.0f} on {} ranks); fix or remove the row",
                  row.size_bytes, row.count, name(row.dtype), row.count, element_bytes,
                  elements_bytes, elements_bytes * static_cast<double>(ranks), ranks));
}

int nodes_spanned(const topo::Topology& topology, int ranks) {
  std::set<int> nodes;
  for (int r = 0; r < ranks; ++r) nodes.insert(topology.vertex(topology.gpu(r)).node);
  return static_cast<int>(nodes.size());
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

std::string version_name(int code) {
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

// The oldest NCCL whose ranking is the newest model's: the last `*_since` of the version terms.
constexpr int newest_model_since() { return detail::kNcclVersionTerms.newest_model_since(); }

// The code that prices a table: its version's, the oldest model's for a version older than it,
// else 0 (the newest model).
int priced_version_code(const NcclTestsTable& table) {
  const std::optional<long> code = version_code_unchecked(table.nccl_version);
  if (code && *code < detail::kNcclVersionCodeMin) return detail::kNcclVersionCodeMin;
  return code && *code <= detail::kNcclVersionCodeMax ? static_cast<int>(*code) : 0;
}

}  // namespace

namespace nccl_tests {

std::string nccl_version_of_code(unsigned long long code) {
  // NCCL_VERSION(X,Y,Z): X x 1000 + Y x 100 + Z up to 2.8, X x 10000 + Y x 100 + Z from 2.9
  // (NVIDIA/nccl src/nccl.h.in, e.g. v2.27.7-1).
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

}  // namespace nccl_tests

int nccl_version_code(std::string_view version) {
  const std::optional<long> code = version_code_unchecked(version);
  return code && *code >= detail::kNcclVersionCodeMin && *code <= detail::kNcclVersionCodeMax
             ? static_cast<int>(*code)
             : 0;
}

NcclVersionPricing nccl_version_pricing(const NcclTestsTable& table) {
  NcclVersionPricing p{priced_version_code(table), ""};
  if (table.nccl_version.empty() || nccl_version_code(table.nccl_version) != 0) return p;
  const std::string where = table.nccl_version_line > 0
                                ? fmt::format("{}:{}", table.source, table.nccl_version_line)
                                : fmt::format("{} (its nccl_version)", table.source);
  const std::string newest =
      fmt::format("the newest model (NCCL {} and later)", version_name(newest_model_since()));
  const std::optional<long> code = version_code_unchecked(table.nccl_version);
  if (code && *code < detail::kNcclVersionCodeMin) {
    const std::string oldest = version_name(p.code);
    p.note = fmt::format(
        "NCCL version {} at {} is older than the oldest tuning model ({}); priced as {}",
        nccl_tests::shown(table.nccl_version, 40), where, oldest, oldest);
  } else if (code) {
    p.note = fmt::format("NCCL version {} at {} is past NCCL's version codes; priced as {}",
                         nccl_tests::shown(table.nccl_version, 40), where, newest);
  } else {
    p.note = fmt::format("unreadable NCCL version '{}' at {}; priced as {}",
                         nccl_tests::shown(table.nccl_version, 40), where, newest);
  }
  return p;
}

Request request_of(const NcclTestsTable& table, const NcclTestsRow& row, bool in_place) {
  Request request;
  request.spec.kind = table.kind.value();
  request.spec.nranks = table.ranks;
  request.spec.count = row.count;
  request.spec.root = row.root >= 0 && row.root < table.ranks ? row.root : 0;
  request.dtype = row.dtype;
  // nccl-tests times the host side too: each GPU's launch, one thread launching nGpus of them.
  request.gpus_per_thread = std::max(1, table.gpus_per_thread);
  // The log's NCCL ranks as its own version's tuning model did (0: not printed, the newest); one
  // older than the model's oldest as the oldest, an unreadable one as the newest (with a note).
  request.nccl_version = priced_version_code(table);
  // Only a one-rank call depends on these (NCCL's copy, nothing in place, a scaling kernel for
  // avg / mulsum): Prediction::one_rank.
  request.in_place = in_place;
  if (row.redop == "avg") request.op = ReduceKind::avg;
  if (row.redop == "mulsum") request.op = ReduceKind::premul_sum;
  return request;
}

}  // namespace twinccl::sim
