// Reading one line of nccl-tests stdout: its fields and the column header's layout.
#include <algorithm>

#include "nccl_tests_log_parts.h"

namespace twinccl::sim::nccl_tests {
namespace {

bool is_time_column(std::string_view t) { return t == "time" || t == "cputime"; }

}  // namespace

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > begin) out.push_back(line.substr(begin, i - begin));
  }
  return out;
}

std::optional<Layout> column_header(const std::vector<std::string_view>& tokens) {
  auto has = [&](std::string_view name) {
    return std::find(tokens.begin(), tokens.end(), name) != tokens.end();
  };
  if (!has("algbw") || !has("busbw") || !(has("time") || has("cputime")) ||
      !(has("size") || has("bytes"))) {
    return std::nullopt;
  }
  Layout layout;
  layout.size = layout.count = layout.type = layout.redop = layout.root = -1;
  layout.blocks.clear();
  std::size_t i = 0;
  for (; i < tokens.size() && !is_time_column(tokens[i]); ++i) {
    const std::string_view t = tokens[i];
    const int at = static_cast<int>(i);
    if (t == "size" || t == "bytes") layout.size = at;
    if (t == "count" || t == "N" || t == "elements") layout.count = at;
    if (t == "type") layout.type = at;
    if (t == "redop" || t == "op") layout.redop = at;
    if (t == "root") layout.root = at;
  }
  layout.leading = static_cast<int>(i);
  while (i < tokens.size() && layout.blocks.size() < 2) {
    Layout::Block b{0, 0, -1, -1, -1};
    for (std::size_t j = i; j < tokens.size() && (j == i || !is_time_column(tokens[j])); ++j) {
      const std::string_view t = tokens[j];
      if (t == "timestamp") break;
      // The first of each name counts: a block that runs on past a mangled second "time"
      // column must not take the second block's algbw for its own.
      if (t == "algbw" && b.algbw < 0) b.algbw = b.fields;
      if (t == "busbw" && b.busbw < 0) b.busbw = b.fields;
      if ((t == "#wrong" || t == "wrong" || t == "error" || t == "res" || t == "#errors") &&
          b.wrong < 0) {
        b.wrong = b.fields;
        b.wrong_kind = t == "#wrong"  ? Layout::Block::Wrong::count
                       : t == "error" ? Layout::Block::Wrong::error
                                      : Layout::Block::Wrong::unknown;
      }
      ++b.fields;
    }
    if (b.algbw < 0 || b.busbw < 0) return std::nullopt;
    layout.blocks.push_back(b);
    i += static_cast<std::size_t>(b.fields);
  }
  // Columns after the last block's #wrong that are not nccl-tests' per-iteration ones (i_min...)
  // belong to another tool (twinccl perf's algorithm/protocol): the block ends at #wrong.
  if (Layout::Block& last = layout.blocks.back(); last.wrong >= 0 && last.wrong + 1 < last.fields) {
    const std::size_t after =
        i - static_cast<std::size_t>(last.fields) + static_cast<std::size_t>(last.wrong) + 1;
    if (after < tokens.size() && tokens[after].substr(0, 2) != "i_" &&
        tokens[after] != "timestamp") {
      last.fields = last.wrong + 1;
      layout.trailing = true;
    }
  }
  // Every column a block reads lies inside it (a block cut at #wrong above may have lost its
  // algbw or busbw): otherwise a row would be read past its values.
  for (const Layout::Block& b : layout.blocks) {
    if (b.algbw >= b.fields || b.busbw >= b.fields || b.wrong >= b.fields) return std::nullopt;
  }
  layout.timestamp = has("timestamp");
  if (layout.size < 0 || layout.count < 0 || layout.type < 0 || layout.blocks.empty())
    return std::nullopt;
  return layout;
}

}  // namespace twinccl::sim::nccl_tests
