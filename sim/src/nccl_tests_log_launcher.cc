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
// the two lines above give rank 7's INFO line and rank 0's whole row. Only the exact tag is taken
// out: '[' digits ',' digits "]<stdout>:" (or <stderr>, <stddiag>), SageMaker's
// "[1,mpirank:0,algo-1]<stdout>:", with the date `--timestamp-output` puts before it; nothing
// else. srun's `--label` prefix (" 0: ") is dropped at the start of a line, as is the indentation
// a copy out of a document adds before a tag.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

// " 0: " (srun --label) at the start of a line.
std::string_view strip_launcher_prefix(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  if (digits(line, i) && i < line.size() && line[i] == ':' &&
      (i + 1 == line.size() || line[i + 1] == ' ')) {
    return line.substr(std::min(line.size(), i + 2));
  }
  return line;
}

}  // namespace

void LauncherLines::add(std::string_view physical, int line_no) {
  Tag tag = next_tag(physical, 0);
  if (tag.at == std::string_view::npos) {  // untagged: a line of its own
    emit_(strip_launcher_prefix(physical), line_no, true);
    return;
  }
  // Text before the first tag: mpirun's own (untagged) output, or a document's indentation.
  const std::string_view before = physical.substr(0, tag.at);
  if (before.find_first_not_of(" \t") != std::string_view::npos) emit_(before, line_no, true);
  auto last = partial_.end();
  while (tag.at != std::string_view::npos) {
    const std::size_t begin = tag.at + tag.length;
    const Tag next = next_tag(physical, begin);
    const std::string_view piece = physical.substr(
        begin, (next.at == std::string_view::npos ? physical.size() : next.at) - begin);
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
    last = found;
    tag = next;
  }
  // The line break ends the line of the stream that wrote last; the others stay unfinished.
  const Partial ended = std::move(last->second);
  partial_.erase(last);
  emit_(ended.text, ended.first_line, true);
}

void LauncherLines::finish() {
  std::vector<std::pair<int, std::string>> left;
  for (auto& [tag, p] : partial_) {
    if (p.text.find_first_not_of(" \t") != std::string::npos)
      left.emplace_back(p.first_line, std::move(p.text));
  }
  partial_.clear();
  std::sort(left.begin(), left.end());
  for (const auto& [line_no, text] : left) emit_(text, line_no, false);
}

}  // namespace twinccl::sim::nccl_tests
