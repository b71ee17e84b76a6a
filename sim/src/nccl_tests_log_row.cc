// One nccl-tests result row read with the column header's layout (nccl_tests_log_parts.h
// read_row): its leading columns (size, count, type, redop, root) and its timed blocks, each
// value checked, for the stdout parser (nccl_tests_log.cc).
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

}  // namespace

NcclTestsRow read_row(const std::vector<std::string_view>& tokens, const Layout& layout,
                      int layout_line, std::string_view source, int line_no,
                      std::string_view line) {
  // hypercube_perf prints its redop column blank: the row's next value (root) stands where the
  // header has redop. Read it as a blank column so the values after it line up.
  std::vector<std::string_view> with_blank;
  const auto redop_at = static_cast<std::size_t>(layout.redop);
  const bool redop_blank =
      layout.redop >= 0 && tokens.size() > redop_at && nccl_tests::parse_real(tokens[redop_at]);
  if (redop_blank) {
    with_blank = tokens;
    with_blank.insert(with_blank.begin() + static_cast<std::ptrdiff_t>(redop_at),
                      std::string_view{});
  }
  const std::vector<std::string_view>& t = redop_blank ? with_blank : tokens;
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
         fmt::format("NCCL's debug output was printed into this row ({} has {} numbers after the "
                     "{} leading columns); join the row's pieces by hand, or rerun with "
                     "NCCL_DEBUG_FILE=<file> so that NCCL writes its lines apart",
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
    r.redop_blank = redop_blank;
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

}  // namespace twinccl::sim::nccl_tests
