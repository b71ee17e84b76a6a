// NCCL's per-call choices read back (twinccl/sim/nccl_ran_choice.h says which lines, from which
// NCCL versions).
//
// How it works: a choice line is "NCCL INFO " then, from 2.23, the collective's name and ':', then
// "<bytes> Bytes -> Algo <algorithm> proto <protocol>" (names from 2.24, numbers before). The
// bytes are matched to a row by the line's form: NCCL's count x the type's size (2.24 on) or
// nccl-tests' size (before). Four rows of a 16-rank all_gather table, 2.24 lines:
//   row size 16777216 count 262144 float -> key 1048576: "AllGather: 1048576 Bytes -> Algo RING .."
// All lines naming one size are one choice when they agree (NCCL picks per size: the warm-up's
// calls and the timed ones say the same), none when they do not.
#include "twinccl/sim/nccl_ran_choice.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <utility>

#include "nccl_tests_log_parts.h"
#include "twinccl/ascii_case.h"
#include "twinccl/data_type.h"

namespace twinccl::sim {
namespace {

// `token` as one of `names` (NCCL's enum order): its number, or its name in any case; `alias`
// read as `as`.
template <std::size_t N>
std::optional<std::string> named_or_numbered(std::string_view token,
                                             const std::array<std::string_view, N>& names,
                                             std::string_view alias = {},
                                             std::string_view as = {}) {
  if (const auto n = nccl_tests::parse_unsigned(token)) {
    if (*n < N) return std::string(names[*n]);
    return std::nullopt;
  }
  std::string name = lowercase_ascii(token);
  if (!alias.empty() && name == alias) name = std::string(as);  // NCCL_ALGO's "NVLSTree"
  for (std::string_view n : names) {
    if (name == n) return name;
  }
  return std::nullopt;
}

// NCCL's algorithm by name (ncclAlgoToString: "RING", "NVLS_TREE"; twinccl's names are those
// in lower case) or by number (nccl_common.h NCCL_ALGO_*: the same order).
std::optional<std::string> algorithm_of(std::string_view token) {
  static constexpr std::array<std::string_view, 7> kAlgorithms{
      "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return named_or_numbered(token, kAlgorithms, "nvlstree", "nvls_tree");
}

// NCCL's protocol by name (ncclProtoToString: "LL", "LL128", "SIMPLE") or number (NCCL_PROTO_*).
std::optional<std::string> protocol_of(std::string_view token) {
  static constexpr std::array<std::string_view, 3> kProtocols{"ll", "ll128", "simple"};
  return named_or_numbered(token, kProtocols);
}

// The key a row is found by in a line's form.
std::size_t row_bytes(const NcclTestsRow& row, bool nccl_count_bytes) {
  return nccl_count_bytes ? row.count * size_of(row.dtype) : row.size_bytes;
}

}  // namespace

std::optional<NcclRanChoice> nccl_ran_choice(std::string_view line, std::string_view source,
                                             int line_no) {
  constexpr std::string_view kInfo = "NCCL INFO ";
  const std::size_t at = line.find(kInfo);
  if (at == std::string_view::npos || line.find(" Bytes -> Algo ") == std::string_view::npos)
    return std::nullopt;
  const std::vector<std::string_view> t = nccl_tests::split(line.substr(at + kInfo.size()));
  NcclRanChoice c;
  std::size_t i = 0;
  if (!t.empty() && t[0].size() > 1 && t[0].back() == ':') {
    const auto collective = nccl_tests::collective_named(t[0].substr(0, t[0].size() - 1));
    // A collective NCCL does not tune (Send, Recv, AlltoAll...): not a choice a row can take.
    if (!collective || !collective->kind) return std::nullopt;
    c.function = collective->name;
    i = 1;
  }
  if (t.size() < i + 7 || t[i + 1] != "Bytes" || t[i + 2] != "->" || t[i + 3] != "Algo" ||
      t[i + 5] != "proto") {
    return std::nullopt;
  }
  const auto bytes = nccl_tests::parse_unsigned(t[i]);
  const auto algorithm = algorithm_of(t[i + 4]);
  const auto protocol = protocol_of(t[i + 6]);
  if (!bytes || *bytes > (1ull << 50) || !algorithm || !protocol) return std::nullopt;
  c.bytes = static_cast<std::size_t>(*bytes);
  // Names from 2.24, whose bytes are NCCL's count's; numbers before, the largest buffer's.
  c.nccl_count_bytes = !nccl_tests::parse_unsigned(t[i + 4]).has_value();
  c.algorithm = *algorithm;
  c.protocol = *protocol;
  c.from = fmt::format("{} line {}", source, line_no);
  return c;
}

namespace nccl_tests {

void RanChoices::add(NcclRanChoice c) {
  if (seen.emplace(c.function, c.nccl_count_bytes, c.bytes, c.algorithm, c.protocol).second)
    list.push_back(std::move(c));
}

}  // namespace nccl_tests

std::vector<NcclRanChoice> read_nccl_ran_choices(std::string_view text, std::string_view source) {
  nccl_tests::RanChoices out;
  nccl_tests::for_each_line(text, source, {"an NCCL debug file", "NCCL's debug output"},
                            [&](std::string_view line, int line_no, bool) {
                              if (auto c = nccl_ran_choice(line, source, line_no))
                                out.add(std::move(*c));
                            });
  return std::move(out.list);
}

RanChoicesApplied apply_nccl_ran_choices(NcclTestsTable& table,
                                         const std::vector<NcclRanChoice>& choices) {
  RanChoicesApplied applied;
  if (!table.kind || choices.empty()) return applied;
  struct Seen {
    const NcclRanChoice* first = nullptr;
    bool conflicting = false;
  };
  std::map<std::pair<bool, std::size_t>, Seen> by_size;  // (form, bytes)
  for (const NcclRanChoice& c : choices) {
    if (!c.function.empty() && c.function != table.collective) continue;
    Seen& s = by_size[{c.nccl_count_bytes, c.bytes}];
    if (!s.first) {
      s.first = &c;
    } else if (s.first->algorithm != c.algorithm || s.first->protocol != c.protocol) {
      s.conflicting = true;
    }
  }
  if (by_size.empty()) return applied;
  std::vector<NcclTestsRow> kept;
  for (NcclTestsRow& row : table.rows) {
    const Seen* seen = nullptr;
    for (bool form : {true, false}) {
      const auto it = by_size.find({form, row_bytes(row, form)});
      if (it != by_size.end()) seen = &it->second;
      if (seen) break;
    }
    if (seen) ++applied.named;
    if (seen && seen->conflicting) {
      ++table.ran_conflicting;
    } else if (seen && row.ran_algorithm.empty()) {
      const NcclRanChoice& c = *seen->first;
      if (c.algorithm == "collnet_direct" || c.algorithm == "collnet_chain") {
        table.skipped.push_back(
            {row.line, fmt::format("NCCL ran this size with {} ({}), CollNet (SHARP), which the "
                                   "simulator does not model; rerun without it "
                                   "(NCCL_COLLNET_ENABLE=0) to compare this size",
                                   c.algorithm, c.from)});
        continue;
      }
      row.ran_algorithm = c.algorithm;
      row.ran_protocol = c.protocol;
      row.ran_from = c.from;
      ++applied.rows;
    }
    kept.push_back(std::move(row));
  }
  table.rows = std::move(kept);
  return applied;
}

}  // namespace twinccl::sim
