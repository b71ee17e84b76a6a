// The library version a log line prints (nccl_tests_log_parts.h library_version).
//
// How it works: the library says its version itself, on stdout, with NCCL_DEBUG=VERSION or INFO;
// nccl-tests' own "# nccl-tests version ... nccl-library=N" is read apart (nccl_tests_log.cc).
//   NCCL  "NCCL version 2.26.2+cuda12.8", alone or after "host:pid:tid [0] NCCL INFO "
//         (NVIDIA/nccl src/init.cc showVersion).
//   RCCL  as its versions printed it (ROCm/rccl src/init.cc showVersion, git log -G
//   VERSION_STRING):
//         "NCCL version 2.4.8+hip" from f11c8f60 (2019-07) to 2020-05 (f40ce73e before it,
//         2019-03, printed NCCL's "+cuda": read as NCCL),
//         "RCCL version 2.8.4+hip4.2" from e41ab173 (2020-05),
//         "RCCL version 2.18.3+hip6.0 HEAD:2f6d59e+" from a89a9966 (2022-06, the git hash after),
//         "RCCL version : 2.22.3-develop:f5b15f2" from c755b9cf (2024-07; "HIP version  : ...",
//         "ROCm version : ...", "Hostname     : ...", "Librccl path : ..." follow on lines of
//         their own), also as "... NCCL INFO RCCL version : ..." where NCCL_DEBUG_FILE is set.
//         rccl-tests prints no library version of its own ("rccl-tests: Version develop:448c4c7"
//         is its git hash: ROCm/rccl-tests@ae3e635 src/common.cu:1212).
// RCCL's version is the NCCL release it tracks: its NCCL_MAJOR / MINOR / PATCH (ROCm/rccl
// makefiles/version.mk, 2.21.5 at 0cbce2a) are NCCL's macros, ncclGetVersion returns them as
// NCCL_VERSION_CODE, and every release of its CHANGELOG.md says "Compatibility with NCCL 2.x.y"
// of its own number (RCCL 2.21.5 for ROCm 6.3.0 ... RCCL-2.9.9 for ROCm 4.5.0).
// The version is the first word after "version" (and RCCL's " : "), as printed, taken only at the
// start of a line, after "# " or right after "NCCL INFO ", and only when it starts with a digit.
#include "nccl_tests_log_parts.h"

namespace twinccl::sim::nccl_tests {

namespace {

// Whether `before` (the line up to the marker) is where a library prints its version line: nothing,
// "# " (only '#' and blanks), or a prefix ending "NCCL INFO " (NCCL_DEBUG=INFO's
// "host:pid:tid [0] NCCL INFO "). NCCL's warnings say "NCCL version" mid-sentence (v2.30.7-1
// src/dev_runtime.cc:1428 "... compiled with NCCL version 2.29.2, but ...", devcomm_v22902.cc:111
// "... the same NCCL version that it will ..."), after "NCCL WARN " and other words: not taken.
bool at_version_line(std::string_view before) {
  if (before.find_first_not_of("# \t") == std::string_view::npos) return true;
  constexpr std::string_view kInfo = "NCCL INFO ";
  return before.size() >= kInfo.size() && before.substr(before.size() - kInfo.size()) == kInfo;
}

}  // namespace

std::optional<LibraryVersion> library_version(std::string_view line) {
  for (std::string_view library : {"NCCL", "RCCL"}) {
    const std::string marker = std::string(library) + " version ";
    const std::size_t at = line.find(marker);
    if (at == std::string_view::npos || !at_version_line(line.substr(0, at))) continue;
    std::vector<std::string_view> t = split(line.substr(at + marker.size()));
    if (!t.empty() && t.front() == ":") t.erase(t.begin());  // RCCL's "RCCL version : 2.22.3"
    // A version starts with a digit; any other word is not one ("": the version read so far stays).
    if (t.empty() || t.front().front() < '0' || t.front().front() > '9') {
      return LibraryVersion{std::string(library), ""};
    }
    // RCCL before 2020 said "NCCL version 2.4.8+hip": its suffix names it.
    const bool hip = t.front().find("+hip") != std::string_view::npos;
    return LibraryVersion{hip ? "RCCL" : std::string(library), shown(t.front(), 40)};
  }
  return std::nullopt;
}

}  // namespace twinccl::sim::nccl_tests
