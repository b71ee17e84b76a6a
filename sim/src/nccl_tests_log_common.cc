// Shared by the nccl-tests stdout and JSON parsers (nccl_tests_log_parts.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <tuple>
#include <vector>

#include "nccl_tests_log_parts.h"
#include "twinccl/ascii_case.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::sim::nccl_tests {
namespace {

struct KnownCollective {
  std::string_view program;  // nccl-tests' program stem: "<program>_perf"
  std::string_view name;     // twinccl's name
  std::optional<OpKind> kind;
};

// Longest program names first, so "reduce_scatter" is found before "reduce" in a file name.
constexpr std::array<KnownCollective, 10> kKnown = {{
    {"reduce_scatter", "reduce_scatter", OpKind::reduce_scatter},
    {"all_reduce", "all_reduce", OpKind::all_reduce},
    {"all_gather", "all_gather", OpKind::all_gather},
    {"broadcast", "broadcast", OpKind::broadcast},
    {"hypercube", "hypercube", std::nullopt},
    {"sendrecv", "sendrecv", std::nullopt},
    {"alltoall", "all_to_all", OpKind::all_to_all},
    {"scatter", "scatter", OpKind::scatter},
    {"reduce", "reduce", OpKind::reduce},
    {"gather", "gather", OpKind::gather},
}};

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

std::string known_names() {
  std::string names;
  for (const KnownCollective& k : kKnown)
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

Collective to_collective(const KnownCollective& k) { return {std::string(k.name), k.kind}; }

const KnownCollective* find_known(std::string_view name) {
  for (const KnownCollective& k : kKnown) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// The collectives whose nccl-tests columns look like one row's: redop, root and size / count
// (size = nranks x count x typesize for the per-rank ones). `open` is set when the row's
// bandwidths are too rounded to tell all_reduce from sendrecv (all_reduce is answered).
std::vector<std::string_view> row_fits(const NcclTestsRow& row, int ranks, bool& open) {
  open = false;
  if (row.redop_blank) return {"hypercube"};  // the only one printing it blank
  if (row.redop.empty()) return {"(no redop column or no row with count > 0)"};
  const double ratio = static_cast<double>(row.size_bytes) /
                       (static_cast<double>(row.count) * static_cast<double>(size_of(row.dtype)));
  const bool per_rank = ratio > 1.5;
  const bool rooted = row.root >= 0;
  const bool one_rank = ranks == 1;
  if (row.redop != "none") {
    if (rooted) return {"reduce"};
    if (one_rank) return {"all_reduce", "reduce_scatter"};
    if (per_rank) return {"reduce_scatter"};
    // sendrecv_perf prints its op too; its busbw is its algbw, all_reduce's 2(n-1)/n of it. On
    // 2 ranks (or unknown ranks) they are equal and all_reduce, by far the commoner log, is read
    // (--collective sendrecv says otherwise); bandwidths under 1 GB/s are too rounded to compare.
    const std::optional<NcclTestsBlock>& b = row.out_of_place ? row.out_of_place : row.in_place;
    open = !b || b->algbw_gbps < 1.0 || ranks <= 2;
    const bool bus_is_alg = !open && std::abs(b->busbw_gbps / b->algbw_gbps - 1.0) < 0.02;
    return {bus_is_alg ? "sendrecv" : "all_reduce"};
  }
  if (rooted) {
    if (one_rank) return {"broadcast", "gather", "scatter"};
    if (per_rank) return {"gather", "scatter"};
    return {"broadcast"};
  }
  if (per_rank || one_rank) return {"all_gather", "all_to_all"};
  return {"sendrecv"};
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string list;
  for (std::string_view f : names) list += (list.empty() ? "" : " or ") + std::string(f);
  return list;
}

// The widest row's fit (the largest count: the least rounded), which every other row with
// count > 0 must share; a garbled row whose columns fit another collective (a 1P row whose
// busbw equals its algbw, in an all_reduce table) is an error naming both lines, not a table
// read as another collective.
std::vector<std::string_view> fitting_columns(const NcclTestsTable& table, int ranks) {
  const NcclTestsRow* widest = nullptr;
  for (const NcclTestsRow& r : table.rows) {
    if (r.count > 0 && (widest == nullptr || r.count > widest->count)) widest = &r;
  }
  if (widest == nullptr) return {"(no redop column or no row with count > 0)"};
  bool widest_open = false;
  const std::vector<std::string_view> fits = row_fits(*widest, ranks, widest_open);
  for (const NcclTestsRow& r : table.rows) {
    if (r.count == 0 || &r == widest) continue;
    bool open = false;
    const std::vector<std::string_view> other = row_fits(r, ranks, open);
    const auto reduce_like = [](const std::vector<std::string_view>& f) {
      return f.size() == 1 && (f.front() == "all_reduce" || f.front() == "sendrecv");
    };
    if (other == fits || ((open || widest_open) && reduce_like(other) && reduce_like(fits)))
      continue;
    fail(table.source, r.line,
         fmt::format("cannot tell which collective this table measured: this row's columns fit "
                     "{}, those of line {} (the widest row) fit {}; a garbled row, or rows of "
                     "several runs; give --collective NAME",
                     joined(other), widest->line, joined(fits)));
  }
  return fits;
}

}  // namespace

std::string shown(std::string_view text, std::size_t max) { return shown_value(text, max); }

void fail(std::string_view source, int line, std::string_view why, std::string_view text) {
  std::string where = shown(source, 200);
  if (line > 0) where += ":" + std::to_string(line);
  std::string message = where + ": " + std::string(why);
  if (!text.empty()) message += ": '" + shown(text) + "'";
  throw ConfigError(message);
}

std::optional<unsigned long long> parse_unsigned(std::string_view token) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ec != std::errc{} || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::optional<long long> parse_integer(std::string_view token) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ec != std::errc{} || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view token) {
  double value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ec != std::errc{} || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::optional<Collective> collective_named(std::string_view text) {
  std::string key = name_key(text);
  for (std::string_view suffix : {"perfmpi", "perf"}) {
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
      key.resize(key.size() - suffix.size());
      break;
    }
  }
  for (const KnownCollective& k : kKnown) {
    if (key == name_key(k.program) || key == name_key(k.name)) return to_collective(k);
  }
  return std::nullopt;
}

std::optional<Collective> collective_of_program(std::string_view line) {
  for (std::size_t at = line.find("_perf"); at != std::string_view::npos;
       at = line.find("_perf", at + 1)) {
    std::size_t begin = at;
    while (begin > 0 && (is_letter(line[begin - 1]) || line[begin - 1] == '_')) --begin;
    const std::string_view stem = line.substr(begin, at - begin);
    for (const KnownCollective& k : kKnown) {
      if (k.program == stem) return to_collective(k);
    }
  }
  return std::nullopt;
}

std::optional<Collective> collective_of_file_name(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string base =
      lowercase_ascii(path.substr(slash == std::string_view::npos ? 0 : slash + 1));
  std::vector<bool> taken(base.size(), false);
  const KnownCollective* found = nullptr;
  for (const KnownCollective& k : kKnown) {
    for (std::string_view spelling : {k.program, k.name}) {
      for (std::size_t at = base.find(spelling); at != std::string::npos;
           at = base.find(spelling, at + 1)) {
        const std::size_t end = at + spelling.size();
        const bool bounded =
            (at == 0 || !is_letter(base[at - 1])) && (end == base.size() || !is_letter(base[end]));
        if (!bounded || std::any_of(taken.begin() + static_cast<std::ptrdiff_t>(at),
                                    taken.begin() + static_cast<std::ptrdiff_t>(end),
                                    [](bool t) { return t; })) {
          continue;
        }
        std::fill(taken.begin() + static_cast<std::ptrdiff_t>(at),
                  taken.begin() + static_cast<std::ptrdiff_t>(end), true);
        if (found != nullptr && found != &k) return std::nullopt;  // names two collectives
        found = &k;
      }
    }
  }
  if (found == nullptr) return std::nullopt;
  return to_collective(*found);
}

void finish_table(NcclTestsTable& table, const TableHints& hints,
                  const NcclTestsParseOptions& options) {
  table.devices_truncated = hints.devices_truncated;
  table.gpus_per_thread = hints.gpus_per_thread;
  table.gpu_name = hints.gpu_name;
  table.ranks =
      options.ranks > 0 ? options.ranks : (hints.devices_truncated ? 0 : hints.device_ranks);
  table.nodes =
      options.nodes > 0 ? options.nodes : (hints.devices_truncated ? 0 : hints.device_nodes);
  if (!table.rows.empty()) table.dtype = table.rows.front().dtype;
  for (auto [given, value, from, flag] :
       {std::tuple{&options.nccl_algo, &table.nccl_algo, &table.nccl_algo_from, "--algo"},
        std::tuple{&options.nccl_proto, &table.nccl_proto, &table.nccl_proto_from, "--proto"}}) {
    if (given->empty()) continue;
    *value = *given;
    *from = flag;
  }
  std::optional<Collective> chosen;
  if (!options.collective.empty()) {
    chosen = collective_named(options.collective);
    if (!chosen) {
      throw ConfigError("--collective '" + shown(options.collective) +
                        "': not an nccl-tests collective; expected one of: " + known_names());
    }
    table.collective_from = "--collective";
  } else if (hints.from_start_line) {
    chosen = hints.from_start_line;
    table.collective_from = "test-starting line";
  } else if (hints.from_program) {
    chosen = hints.from_program;
    table.collective_from = "program name";
  } else if ((chosen = collective_of_file_name(table.source))) {
    table.collective_from = "file name";
  } else {
    const std::vector<std::string_view> fits = fitting_columns(table, table.ranks);
    if (fits.size() != 1 || find_known(fits.front()) == nullptr) {
      const std::string list = joined(fits);
      fail(table.source, table.first_line,
           "cannot tell which collective this table measured (no '# Collective test starting' "
           "line, no <name>_perf "
           "program in the log, none in the file name; the columns fit " +
               list + "); give --collective NAME");
    }
    chosen = to_collective(*find_known(fits.front()));
    table.collective_from = "columns";
  }
  table.collective = chosen->name;
  table.kind = chosen->kind;
}

std::optional<std::string> unreadable_row(const std::vector<std::string_view>& t) {
  const auto whole = [](std::string_view v) {
    return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (t.size() < 2 || (whole(t[0]) && whole(t[1]))) return std::nullopt;  // a row, or too short
  std::string_view first = t[0];
  if (first.front() == '-' || first.front() == '+') first.remove_prefix(1);
  if (first.empty() || first.find_first_of("0123456789.") != 0) return std::nullopt;
  int numbers = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (t[i] == "N/A" || parse_real(t[i])) ++numbers;
  }
  if (numbers < 3) return std::nullopt;  // a sentence that starts with a number
  if (!whole(t[0])) {
    return fmt::format("the size '{}' is not a whole number of bytes{}", shown(t[0], 20),
                       t[0].front() == '-' ? " (negative)" : "");
  }
  return fmt::format("the count '{}' is not a whole number of elements", shown(t[1], 20));
}

void fail_no_row_read(std::string_view source, const std::vector<NcclTestsSkippedLine>& skipped) {
  std::string lines;
  for (std::size_t i = 0; i < skipped.size() && i < 3; ++i)
    lines += fmt::format("{}line {}: {}", i == 0 ? "" : "; ", skipped[i].line, skipped[i].why);
  fail(source, 0,
       fmt::format("no result row could be read: {} row-like line(s) were not ({}{})",
                   skipped.size(), lines, skipped.size() > 3 ? "; ..." : ""));
}

std::optional<std::string> nccl_version_of_code(unsigned long long code) {
  if (code == 0 || code >= kNcclVersionCodeLimit) return std::nullopt;
  // NCCL_VERSION(X,Y,Z): X x 1000 + Y x 100 + Z up to 2.8, X x 10000 + Y x 100 + Z from 2.9
  // (NVIDIA/nccl src/nccl.h.in, e.g. v2.27.7-1).
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

void for_each_line(std::string_view text, std::string_view source, TextKind what,
                   const std::function<void(std::string_view, int, bool)>& line) {
  if (text.size() > kNcclTestsMaxBytes) {
    fail(source, 0,
         fmt::format("{} bytes, more than the {} {} is read up to", text.size(), kNcclTestsMaxBytes,
                     what.read_as));
  }
  int line_no = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(begin, end - begin);
    ++line_no;
    if (piece.size() > kNcclTestsMaxLineBytes) {
      fail(source, line_no,
           fmt::format("a line of {} bytes, longer than {}; not {}", piece.size(),
                       kNcclTestsMaxLineBytes, what.not_one),
           piece);
    }
    const bool cr = !piece.empty() && piece.back() == '\r';
    if (cr) piece.remove_suffix(1);
    line(piece, line_no, end < text.size() || cr);
    begin = end + 1;
  }
}

}  // namespace twinccl::sim::nccl_tests
