// Rows with NCCL's debug lines written into them, parted and joined (nccl_tests_log_parts.h
// GluedRows).
//
// How it works: nccl-tests writes a row in pieces (its leading columns, then each timed block:
// NVIDIA/nccl-tests v2.19.6 src/common.cu TimeTest, writeBenchmarkLinePreamble then BenchTime) with
// printf, and NCCL writes its debug lines to the same stdout (NCCL_DEBUG_FILE unset) with
// fprintf, one stdio buffer for both: a line NCCL prints between two pieces (a connection made at
// a new size; with NCCL_DEBUG_SUBSYS=TUNING one per call) follows the piece on the same line,
//   "     1048576   262144  float  sum  -1node0:77:77 [0] NCCL INFO AllReduce: 1048576 Bytes ..."
//   "node0:77:77 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 ..."
//   "   45.10  23.25  43.59  0node0:77:77 [0] NCCL INFO AllReduce: 1048576 Bytes ..."
//   "   44.90  23.35  43.79  0"
// and the row's next piece starts a later line. NCCL's line starts "host:pid:tid [dev] " with the
// process's host name cut at its first '.' (NVIDIA/nccl src/debug.cc, getHostName), as the device
// block's names are (nccl-tests src/util.cu getHostName): where the longest such name of the run
// ends a piece, followed by ":<pid>:<tid> [", the piece ends. Without the names the boundary is not
// known ("-10666a154:" is root -1 on host 0666a154, or root -10 on 666a154): such a row is
// refused as before (nccl_tests_log_row.cc). A piece is kept only if it looks like a row's (its
// first token a number); the pieces are joined with spaces once a line ends with no NCCL line in
// it; a '#' line in between ends the row unfinished (nccl-tests writes none inside a row).
#include <cctype>

#include "nccl_tests_log_parts.h"

namespace twinccl::sim::nccl_tests {
namespace {

bool digits_at(std::string_view s, std::size_t& i) {
  const std::size_t begin = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
  return i > begin;
}

bool number_like(std::string_view token) {
  return !token.empty() &&
         (std::isdigit(static_cast<unsigned char>(token.front())) != 0 || token.front() == '-');
}

// A row's later piece: its timed blocks, numbers (and N/A) only.
bool later_piece(const std::vector<std::string_view>& tokens) {
  if (tokens.empty()) return false;
  for (std::string_view t : tokens) {
    if (!number_like(t) && t != "N/A") return false;
  }
  return true;
}

// A row's first piece: its size, then words among its leading columns (the type).
bool first_piece(const std::vector<std::string_view>& tokens) {
  return !tokens.empty() &&
         tokens.front().find_first_not_of("0123456789") == std::string_view::npos &&
         !later_piece(tokens);
}

}  // namespace

void GluedRows::add_host(std::string_view host) {
  if (!host.empty() && host.size() <= 255) hosts_.emplace(host);
}

std::size_t GluedRows::nccl_line_at(std::string_view text) const {
  if (hosts_.empty() || text.find(" NCCL ") == std::string_view::npos)
    return std::string_view::npos;
  // NCCL's prefix comes once in its line: a few places of the form are tried, not every colon of
  // a hostile line (each costs up to 255 name lookups).
  int tried = 0;
  for (std::size_t colon = text.find(':'); colon != std::string_view::npos && tried < 4;
       colon = text.find(':', colon + 1)) {
    std::size_t i = colon + 1;
    if (!digits_at(text, i) || i >= text.size() || text[i] != ':') continue;
    ++i;
    if (!digits_at(text, i) || text.substr(i, 2) != " [") continue;
    ++tried;
    // The longest name of the run that ends right before the colon.
    for (std::size_t b = colon > 255 ? colon - 255 : 0; b < colon; ++b) {
      if (hosts_.find(text.substr(b, colon - b)) != hosts_.end()) return b;
    }
  }
  return std::string_view::npos;
}

std::vector<GluedRows::Line> GluedRows::feed(std::string_view text, int line_no, bool ended) {
  std::vector<Line> out;
  if (!piece_.empty() && !text.empty() && text.front() == '#') {
    if (std::optional<Line> cut = flush()) out.push_back(std::move(*cut));
    out.push_back({std::string(text), line_no, ended});
    return out;
  }
  const std::size_t at = nccl_line_at(text);
  if (at == 0) {  // NCCL's own line, between two pieces or not
    out.push_back({std::string(text), line_no, ended});
    return out;
  }
  const std::string_view piece = at == std::string_view::npos ? text : text.substr(0, at);
  const std::vector<std::string_view> tokens = split(piece);
  // A new row while one is open: the open one never got its last piece.
  if (!piece_.empty() && first_piece(tokens)) {
    if (std::optional<Line> cut = flush()) out.push_back(std::move(*cut));
  }
  const bool goes_on = piece_.empty() ? first_piece(tokens) : later_piece(tokens);
  if (at != std::string_view::npos && goes_on) {  // a piece, NCCL's line after it
    // A row is a few hundred bytes: pieces past a line's bound end it, not read (a hostile log
    // of endless pieces keeps no more).
    if (piece_.size() + piece.size() >= kNcclTestsMaxLineBytes) {
      if (std::optional<Line> cut = flush()) out.push_back(std::move(*cut));
      out.push_back({std::string(text.substr(at)), line_no, ended});
      return out;
    }
    if (piece_.empty()) piece_line_ = line_no;
    piece_ += (piece_.empty() ? "" : " ") + std::string(piece);
    out.push_back({std::string(text.substr(at)), line_no, ended});
    return out;
  }
  if (!piece_.empty() && goes_on) {  // the row's last piece
    out.push_back({piece_ + " " + std::string(text), piece_line_, ended});
    piece_.clear();
    piece_line_ = 0;
    return out;
  }
  out.push_back({std::string(text), line_no, ended});
  return out;
}

std::optional<GluedRows::Line> GluedRows::flush() {
  if (piece_.empty()) return std::nullopt;
  Line cut{std::move(piece_), piece_line_, false};
  piece_.clear();
  piece_line_ = 0;
  return cut;
}

}  // namespace twinccl::sim::nccl_tests
