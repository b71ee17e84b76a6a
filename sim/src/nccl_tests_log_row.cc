// One nccl-tests result row read with the column header's layout (nccl_tests_log_parts.h
// read_row): its leading columns (size, count, type, redop, root) and its timed blocks, each
// value checked, for the stdout parser (nccl_tests_log.cc); and whether a row no line break ended
// is provably whole (unended_row_cut).
#include <fmt/format.h>

#include <cmath>

#include "nccl_tests_log_parts.h"
#include "twinccl/errors.h"

namespace twinccl::sim::nccl_tests {
namespace {

NcclTestsBlock block(std::string_view source, const std::vector<std::string_view>& values,
                     std::size_t first, const Layout::Block& b, int line_no,
                     std::string_view line) {
  auto number = [&](int field, std::string_view what) {
    const std::string_view token = values[first + static_cast<std::size_t>(field)];
    const std::optional<double> v = nccl_tests::parse_real(token);
    if (!v || !std::isfinite(*v) || *v < 0 || *v > 1e15) {
      fail(source, line_no,
           fmt::format("{} '{}' is not a finite number in 0..1e15", what,
                       nccl_tests::shown(token, 20)),
           line);
    }
    return *v;
  };
  NcclTestsBlock out;
  out.time_us = number(b.time, "time");
  out.algbw_gbps = number(b.algbw, "algbw");
  out.busbw_gbps = number(b.busbw, "busbw");
  if (b.wrong >= 0) {
    std::string_view w = values[first + static_cast<std::size_t>(b.wrong)];
    if (w != "N/A") {
      if (w.size() > 1 && w.back() == '*') w.remove_suffix(1);  // pre-2022: error above tolerance
      const std::optional<double> v = nccl_tests::parse_real(w);
      if (!v || !std::isfinite(*v) || *v < 0)
        fail(source, line_no, "#wrong is not a count, an error or N/A", line);
      out.wrong = *v;
    }
  }
  return out;
}

// hypercube_perf prints its redop column blank: the row's next value (root) stands where the
// header has redop.
bool redop_blank(const std::vector<std::string_view>& tokens, const Layout& layout) {
  const auto redop_at = static_cast<std::size_t>(layout.redop);
  return layout.redop >= 0 && tokens.size() > redop_at &&
         nccl_tests::parse_real(tokens[redop_at]).has_value();
}

}  // namespace

bool ends_in_value(const std::vector<std::string_view>& tokens, const Layout& layout) {
  const std::size_t blank = redop_blank(tokens, layout) ? 1 : 0;
  return tokens.size() + blank <= static_cast<std::size_t>(layout.leading + layout.fields());
}

NcclTestsRow read_row(const std::vector<std::string_view>& tokens, const Layout& layout,
                      int layout_line, std::string_view source, int line_no,
                      std::string_view line) {
  // A blank redop column (hypercube) is read as one, so that the values after it line up.
  std::vector<std::string_view> with_blank;
  const auto redop_at = static_cast<std::size_t>(layout.redop);
  const bool blank_redop = redop_blank(tokens, layout);
  if (blank_redop) {
    with_blank = tokens;
    with_blank.insert(with_blank.begin() + static_cast<std::ptrdiff_t>(redop_at),
                      std::string_view{});
  }
  const std::vector<std::string_view>& t = blank_redop ? with_blank : tokens;
  const auto lead = static_cast<std::size_t>(layout.leading);
  const std::string where =
      layout_line > 0 ? fmt::format("the column header at line {}", layout_line)
                      : std::string("nccl-tests' current 13-column layout (no header seen)");
  if (t.size() < lead)
    fail(source, line_no, fmt::format("a row with {} fields, fewer than {}", t.size(), where),
         line);
  std::vector<std::string_view> values;
  std::size_t i = lead;
  auto value_like = [](std::string_view v) {  // a number, N/A, or a pre-2022 error flagged '*'
    return v == "N/A" || nccl_tests::parse_real(v) ||
           (v.back() == '*' && nccl_tests::parse_real(v.substr(0, v.size() - 1)));
  };
  for (; i < t.size() && value_like(t[i]); ++i) values.push_back(t[i]);
  const auto all = static_cast<std::size_t>(layout.fields());
  const bool extra_ok = layout.timestamp || layout.trailing;
  if (extra_ok && values.size() > all) values.resize(all);
  const bool rest_ok = i == t.size() || extra_ok;
  NcclTestsRow r;
  r.line = line_no;
  if (rest_ok && values.size() == all) {
    std::size_t at = 0;
    for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
      (b == 0 ? r.out_of_place : r.in_place) =
          block(source, values, at, layout.blocks[b], line_no, line);
      at += static_cast<std::size_t>(layout.blocks[b].fields);
    }
    if (layout.blocks.size() == 1) r.in_place.reset();
  } else if (rest_ok && layout.blocks.size() == 2 &&
             values.size() == static_cast<std::size_t>(layout.blocks[1].fields)) {
    r.in_place =
        block(source, values, 0, layout.blocks[1], line_no, line);  // out-of-place printed blank
  } else if (i < t.size() && values.size() < all &&
             (line.find(" NCCL INFO ") != std::string_view::npos ||
              line.find(" NCCL WARN ") != std::string_view::npos)) {
    // NCCL_DEBUG=INFO writes to the same stdout: a line NCCL printed while nccl-tests was between
    // two writes of a row (a runtime connection at a new size) lands inside the row.
    fail(source, line_no,
         fmt::format(
             "NCCL's debug output was printed into this row ({} has {} numbers after the "
             "{} leading columns); join the row's pieces by hand, or rerun with "
             "NCCL_DEBUG_FILE=<file> so that NCCL writes its lines apart (compare and calibrate "
             "read its per-call lines with --nccl-debug)",
             where, all, lead),
         line);
  } else if (i < t.size() && values.size() < all) {
    // A word where a number belongs: a README's placeholder row ("XXXXX  XXX.XX"), or a row
    // garbled in copying.
    fail(source, line_no,
         fmt::format("'{}' (field {}) is not a number, and {} has {} numbers after the {} "
                     "leading columns; a placeholder or a garbled row: fix or remove it",
                     nccl_tests::shown(t[i], 20), i + 1, where, all, lead),
         line);
  } else {
    fail(source, line_no,
         fmt::format("a row that does not fit {} ({} values expected after the {} leading columns)",
                     where, all, lead),
         line);
  }
  const auto size = nccl_tests::parse_unsigned(t[static_cast<std::size_t>(layout.size)]);
  const auto count = nccl_tests::parse_unsigned(t[static_cast<std::size_t>(layout.count)]);
  if (!size || !count || *size > (1ull << 50) || *count > *size) {
    fail(source, line_no, "size and count must be whole numbers with count <= size <= 2^50", line);
  }
  r.size_bytes = *size;
  r.count = *count;
  try {
    r.dtype = parse_data_type(t[static_cast<std::size_t>(layout.type)]);
  } catch (const Error&) {
    fail(source, line_no,
         fmt::format("unknown data type '{}'",
                     nccl_tests::shown(t[static_cast<std::size_t>(layout.type)], 20)),
         line);
  }
  if (layout.redop >= 0) {
    const std::string_view redop = t[static_cast<std::size_t>(layout.redop)];
    r.redop_blank = blank_redop;
    if (redop.size() > 20 ||
        redop.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string_view::npos) {
      fail(source, line_no, "redop must be a name like sum or none", line);
    }
    r.redop = std::string(redop);
  }
  if (layout.root >= 0) {
    const auto root = nccl_tests::parse_integer(t[static_cast<std::size_t>(layout.root)]);
    // A root is a rank: the bound device lines and --ranks share (kNcclTestsMaxRanks).
    if (!root || *root < -1 || *root >= kNcclTestsMaxRanks) {
      fail(source, line_no,
           fmt::format("root must be -1 or a rank (0..{}: the model takes at most {} ranks)",
                       kNcclTestsMaxRanks - 1, kNcclTestsMaxRanks),
           line);
    }
    r.root = static_cast<int>(*root);
  }
  return r;
}

// nccl-tests writes a row in pieces, its line break last (NVIDIA/nccl-tests v2.19.6
// src/common.cu:938-941 TimeTest: writeBenchmarkLinePreamble, BenchTime twice, then
// writeBenchmarkLineTerminator's "\n", src/util.cu:454-472; ROCm/rccl-tests@ae3e635 the same,
// src/common.cu:810-816), and stdout into a file or a pipe stops at any byte when the run dies, as
// a copy of a log may end anywhere. So a row without its line break may be cut before a block (cut
// after its out-of-place block it reads as a row whose out-of-place block was blank) or inside its
// last field: a #wrong of "12" cut to "1", a last busbw "12.57" to "12.5". It is read only with all
// of the layout's fields and a last one known whole: followed by what the run wrote after it (a
// space, a column after the values) or one that no field nccl-tests prints there extends: "N/A";
// in a "#wrong" column "0" (a count printed with %g, src/util.cu:508: a longer one never starts
// with 0); in the pre-2022 "error" column "0e+00" (%5.0le of 0 in every version before,
// src/common.cu PRINT("  %7s  %6.2f  %6.2f  %5.0le"); "1e-10" may be a piece of "1e-100").
// Anything else ("1", "12.5", "0e+00" cut to "0") may be a piece of its field.
std::optional<std::string> unended_row_cut(const std::vector<std::string_view>& tokens,
                                           const Layout& layout, int layout_line,
                                           std::string_view source, int line_no,
                                           std::string_view line) {
  bool all_fields = false;
  try {
    all_fields =
        read_row(tokens, layout, layout_line, source, line_no, line).out_of_place.has_value();
  } catch (const ConfigError&) {
  }
  if (!all_fields) {
    return std::string(
        "the output ends in the middle of this row (the run stopped, or the log was cut there): "
        "not all of its columns were printed, or the run printed no out-of-place block "
        "(nccl-tests' writeBenchMarkLineNullBody, rccl-tests with out-of-place off); none is "
        "read; if the row is whole, end the log with a line break");
  }
  const Layout::Block& last = layout.blocks.back();
  const std::string_view field = tokens.back();
  using Wrong = Layout::Block::Wrong;
  const bool zero =
      last.wrong == last.fields - 1 && ((last.wrong_kind == Wrong::count && field == "0") ||
                                        (last.wrong_kind == Wrong::error && field == "0e+00"));
  if (line.back() == ' ' || line.back() == '\t' || !ends_in_value(tokens, layout) ||
      field == "N/A" || zero) {
    return std::nullopt;
  }
  return fmt::format(
      "no line break ends this row (the run stopped, or the log was cut there), so its last field "
      "'{}' may be cut short ('12' cut to '1'); none of it is read. If the row is whole, end the "
      "log with a line break",
      shown(field, 20));
}

}  // namespace twinccl::sim::nccl_tests
