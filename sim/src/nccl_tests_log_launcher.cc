// The lines a launcher's output holds, as each rank printed them (nccl_tests_log_parts.h
// LauncherLines).
//
// How it works: Open MPI's `--tag-output` (mpirun -tag-output, Kubeflow's MPIJob) puts
// "[jobid,rank]<stdout>:" before every write a rank makes, not before every line, and nccl-tests
// prints a row in several writes (the leading columns, then each timed block: NVIDIA/nccl-tests
// v2.19.6 src/common.cu TimeTest, writeBenchmarkLinePreamble then BenchTime). So a row reads
//
//   [1,0]<stdout>:     8     2  float  sum  -1[1,0]<stdout>:  85.70  0.00  0.00  0[1,0]<stdout>:...
//
// and a write of another rank that lands between two writes of a row splits the row in two:
//
//   [1,0]<stdout>:     8     2  float  sum  -1[1,7]<stdout>:host:37:111 [7] NCCL INFO Connected
//   [1,0]<stdout>:  85.70  0.00  0.00  0 ...
//
// Each tag starts a piece of its rank's stream; a line break ends the line of the stream whose
// piece it follows. Every stream keeps its unfinished line until its own line break comes, so
// the two lines above give rank 7's INFO line and rank 0's whole row. A line a rank never ended
// (its run failed mid-row) is handed on as not ended when that rank next writes a '#' line
// (nccl-tests writes none inside a row), when any rank starts a run ("# nThread", "# Collective
// test starting", "# nccl-tests version": the dead row belongs to the run before) and at the end
// of the log, whose last line is not ended without its line break. Only the exact tag is taken
// out: '[' digits ',' digits "]<stdout>:" (or <stderr>, <stddiag>), SageMaker's
// "[1,mpirank:0,algo-1]<stdout>:", with the date `--timestamp-output` puts before it; nothing
// else. srun's `--label` prefix (" 0: ") and MPICH's `-prepend-rank` one ("[0] ") are dropped at
// the start of a line, as is the indentation
// a copy out of a document adds before a tag.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>

#include "nccl_tests_log_parts.h"

namespace twinccl::sim::nccl_tests {
namespace {

bool digits(std::string_view s, std::size_t& i) {
  const std::size_t begin = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i > begin;
}

bool name_chars(std::string_view s, std::size_t& i) {  // a host name: letters, digits, . _ -
  const std::size_t begin = i;
  while (i < s.size() && i - begin < 64 &&
         (std::isalnum(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.' || s[i] == '_' ||
          s[i] == '-')) {
    ++i;
  }
  return i > begin;
}

// The length of Open MPI's tag at `at`, 0 when there is none: "[1,0]<stdout>:" (jobid, rank),
// "[1,mpirank:0,algo-1]<stdout>:" (as Amazon SageMaker's mpirun tags), <stderr> or <stddiag>.
std::size_t tag_length(std::string_view s, std::size_t at) {
  std::size_t i = at;
  if (i >= s.size() || s[i] != '[') return 0;
  ++i;
  if (!digits(s, i) || i >= s.size() || s[i] != ',') return 0;
  ++i;
  if (s.substr(i, 8) == "mpirank:") {
    i += 8;
    if (!digits(s, i) || i >= s.size() || s[i] != ',') return 0;
    ++i;
    if (!name_chars(s, i)) return 0;
  } else if (!digits(s, i)) {
    return 0;
  }
  if (s.substr(i, 2) != "]<") return 0;
  i += 2;
  for (std::string_view stream : {"stdout>:", "stderr>:", "stddiag>:"}) {
    if (s.substr(i, stream.size()) == stream) return i + stream.size() - at;
  }
  return 0;
}

// Whether the 24 characters before `at` are the ctime date `mpirun --timestamp-output` puts
// before each tag ("Thu Jun 18 14:28:35 2020").
bool timestamp_before(std::string_view s, std::size_t at) {
  constexpr std::string_view kShape = "Aaa Aaa _9 99:99:99 9999";  // A/a: letter, 9: digit
  if (at < kShape.size()) return false;
  const std::string_view date = s.substr(at - kShape.size(), kShape.size());
  for (std::size_t i = 0; i < kShape.size(); ++i) {
    const auto c = static_cast<unsigned char>(date[i]);
    const bool fits = kShape[i] == 'A'   ? std::isupper(c) != 0
                      : kShape[i] == 'a' ? std::islower(c) != 0
                      : kShape[i] == '9' ? std::isdigit(c) != 0
                      : kShape[i] == '_' ? (c == ' ' || std::isdigit(c) != 0)
                                         : c == static_cast<unsigned char>(kShape[i]);
    if (!fits) return false;
  }
  return true;
}

struct Tag {
  std::size_t at = std::string_view::npos, length = 0;  // with its timestamp, if any
  std::string_view stream;                              // "[1,0]<stdout>:": whose write it is
};

Tag next_tag(std::string_view s, std::size_t from) {
  for (std::size_t at = s.find('[', from); at != std::string_view::npos; at = s.find('[', at + 1)) {
    const std::size_t length = tag_length(s, at);
    if (length == 0) continue;
    const std::size_t date = timestamp_before(s, at) && at >= from + 24 ? 24 : 0;
    return {at - date, length + date, s.substr(at, length)};
  }
  return {};
}

// " 0: " (srun --label) or "[0] " (MPICH / Intel MPI mpirun -prepend-rank: NVIDIA/nccl#1453's
// log) at the start of a line.
std::string_view strip_launcher_prefix(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t start = i;
  if (digits(line, i) && i < line.size() && line[i] == ':' &&
      (i + 1 == line.size() || line[i + 1] == ' ')) {
    return line.substr(std::min(line.size(), i + 2));
  }
  i = start;
  if (i < line.size() && line[i] == '[' && digits(line, ++i) && i < line.size() && line[i] == ']' &&
      (i + 1 == line.size() || line[i + 1] == ' ')) {
    return line.substr(std::min(line.size(), i + 2));
  }
  return line;
}

// A piece of a write that is a '#' header line.
bool header(std::string_view piece) {
  const std::size_t at = piece.find_first_not_of(" \t");
  return at != std::string_view::npos && piece[at] == '#';
}

}  // namespace

// Whether a line (or a write's piece) is a header nccl-tests prints only at the start of a run.
bool LauncherLines::starts_run(std::string_view piece) {
  std::size_t at = piece.find_first_not_of(" \t");
  if (at == std::string_view::npos || piece[at] != '#') return false;
  at = piece.find_first_not_of(" \t", at + 1);
  if (at == std::string_view::npos) return false;
  const std::string_view body = piece.substr(at);
  for (std::string_view run : {"nThread", "Collective test starting", "nccl-tests version"}) {
    if (body.substr(0, run.size()) == run) return true;
  }
  return false;
}

void LauncherLines::add(std::string_view physical, int line_no, bool broken) {
  Tag tag = next_tag(physical, 0);
  if (tag.at == std::string_view::npos) {  // untagged: a line of its own
    const std::string_view line = strip_launcher_prefix(physical);
    if (starts_run(line) || !broken) end_unfinished();
    emit_(line, line_no, broken);
    return;
  }
  // Text before the first tag: mpirun's own (untagged) output, or a document's indentation.
  const std::string_view before = physical.substr(0, tag.at);
  if (before.find_first_not_of(" \t") != std::string_view::npos) {
    if (starts_run(before)) end_unfinished();  // as an untagged line's run header does
    emit_(before, line_no, true);
  }
  std::string_view last;  // the stream that wrote last
  while (tag.at != std::string_view::npos) {
    const std::size_t begin = tag.at + tag.length;
    const Tag next = next_tag(physical, begin);
    const std::string_view piece = physical.substr(
        begin, (next.at == std::string_view::npos ? physical.size() : next.at) - begin);
    if (starts_run(piece)) {
      end_unfinished();  // a new run: every rank's unfinished line belongs to the one before
    } else if (header(piece)) {
      end_unfinished(tag.stream);  // nccl-tests writes a '#' line whole, never inside a row
    }
    auto found = partial_.find(tag.stream);
    if (found == partial_.end()) {
      // A real log leaves a few ranks' lines unfinished at once (rank 0's row between writes);
      // a bound keeps a hostile one from holding a stream per tag.
      if (partial_.size() >= kMaxUnfinishedLines) {
        fail(source_, line_no,
             fmt::format("more than {} launcher streams with an unfinished line at once; not one "
                         "launcher's output",
                         kMaxUnfinishedLines));
      }
      found = partial_.emplace(std::string(tag.stream), Partial{{}, line_no}).first;
    }
    Partial& p = found->second;
    if (p.text.size() + piece.size() > kNcclTestsMaxLineBytes) {
      fail(source_, p.first_line,
           fmt::format("a line of {} printed over {}..{} is longer than {}; not nccl-tests output",
                       std::string(tag.stream), p.first_line, line_no, kNcclTestsMaxLineBytes));
    }
    p.text.append(piece);
    last = tag.stream;
    tag = next;
  }
  // No line break (the log's last line, cut): every line stays unfinished until finish().
  if (!broken) return;
  // The line break ends the line of the stream that wrote last; the others stay unfinished.
  const auto found = partial_.find(last);
  if (found == partial_.end()) return;  // cannot happen: the last piece's stream was just written
  const Partial ended = std::move(found->second);
  partial_.erase(found);
  emit_(ended.text, ended.first_line, true);
}

void LauncherLines::end_unfinished(std::optional<std::string_view> stream) {
  // One stream's by a look-up: a log of '#' writes on many unfinished streams stays linear.
  const auto first = stream ? partial_.find(*stream) : partial_.begin();
  const auto last = stream ? (first == partial_.end() ? first : std::next(first)) : partial_.end();
  std::vector<std::pair<int, std::string>> left;
  for (auto it = first; it != last; ++it) {
    if (it->second.text.find_first_not_of(" \t") != std::string::npos)
      left.emplace_back(it->second.first_line, std::move(it->second.text));
  }
  partial_.erase(first, last);
  std::sort(left.begin(), left.end());
  for (const auto& [line_no, text] : left) emit_(text, line_no, false);
}

void LauncherLines::finish() { end_unfinished(); }

}  // namespace twinccl::sim::nccl_tests
