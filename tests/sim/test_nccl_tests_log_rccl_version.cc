// An rccl-tests log's RCCL version (nccl_tests_log_version.cc): read in each form RCCL printed it,
// and priced as the NCCL release of its number, which RCCL tracks, with a note saying so.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"

using namespace twinccl::sim;

namespace {

constexpr const char* kTable =
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  1 on node-a device  0 [0000:05:00] AMD Instinct MI300X\n"
    "#  Rank  1 Group  0 Pid  2 on node-a device  1 [0000:25:00] AMD Instinct MI300X\n"
    "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
    "  8  2  float  sum  -1  20.0  0.00  0.00  0  20.0  0.00  0.00  0\n";

// rccl-tests' header with `line` as line 4, where RCCL (NCCL_DEBUG=VERSION) prints it.
NcclTestsTable with_line(const std::string& line) {
  return parse_nccl_tests_output(
             "# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n#\n"
             "rccl-tests: Version develop:448c4c7\n" +
                 line + "\n" + kTable,
             "run.log")
      .front();
}

}  // namespace

TEST_CASE("RCCL's version line is read in every form RCCL printed it",
          "[nccl_tests_log][nccl_version][rccl]") {
  struct Form {
    std::string line, version;
    int code;
  };
  // Before: none of the "RCCL version" lines was read (the rows priced with the newest model).
  for (const Form& f : {
           Form{"RCCL version : 2.22.3-develop:f5b15f2", "2.22.3-develop:f5b15f2", 22203},
           Form{"node-a:1:1 [0] NCCL INFO RCCL version : 2.20.5-HEAD:45b618a",
                "2.20.5-HEAD:45b618a", 22005},
           Form{"RCCL version 2.18.3+hip6.0 HEAD:2f6d59e+", "2.18.3+hip6.0", 21803},
           Form{"RCCL version 2.10.3+hip5.0", "2.10.3+hip5.0", 21003},
           Form{"NCCL version 2.4.8+hip", "2.4.8+hip", 20900},  // RCCL before 2020
       }) {
    INFO(f.line);
    const NcclTestsTable t = with_line(f.line);
    CHECK(t.nccl_version == f.version);
    CHECK(t.nccl_version_library == "RCCL");
    CHECK(t.nccl_version_line == 4);
    CHECK(nccl_version_pricing(t).code == f.code);
    CHECK(request_of(t, t.rows.front()).nccl_version == f.code);
    CHECK_THAT(nccl_version_pricing(t).note,
               Catch::StartsWith("RCCL version " + f.version + " at run.log:4 "));
  }
  // rccl-tests' own version and the lines RCCL prints after its version are not a library's.
  for (const char* other : {"HIP version  : 6.3.42131-fa1d09cbd", "ROCm version : 6.3.0.0-39",
                            "Librccl path : /opt/rocm/lib/librccl.so.1"}) {
    INFO(other);
    CHECK(with_line(other).nccl_version.empty());
  }
  CHECK(with_line("NCCL version 2.26.2+cuda12.8").nccl_version_library == "NCCL");
}

TEST_CASE("an RCCL version is priced as the NCCL release it tracks, and the note says so",
          "[nccl_tests_log][nccl_version][rccl]") {
  const NcclTestsTable t = with_line("RCCL version : 2.22.3-develop:f5b15f2");
  CHECK(nccl_version_pricing(t).note ==
        "RCCL version 2.22.3-develop:f5b15f2 at run.log:4 is priced as NCCL 2.22.3, the NCCL "
        "release it tracks (RCCL's own tuning terms where the model has them)");
  CHECK(nccl_version_pricing(with_line("RCCL version 2.8.4+hip4.2")).note ==
        "RCCL version 2.8.4+hip4.2 at run.log:4 is older than the oldest tuning model (2.9.0); "
        "priced as 2.9.0");
  CHECK(nccl_version_pricing(with_line("RCCL version : 2.x")).note ==
        "unreadable RCCL version '2.x' at run.log:4; priced as the newest model (NCCL 2.30.3 "
        "and later)");
}

TEST_CASE("the kept rccl-tests logs give their RCCL version", "[nccl_tests_log][rccl]") {
  // AMD's ROCm blog log (tests/fidelity/logs/SOURCES.md): "RCCL version : 2.22.3-develop:f5b15f2"
  // at line 13, after the device block.
  std::ifstream in(std::string(TWINCCL_SOURCE_DIR) +
                   "/tests/fidelity/logs/amd-mi300x-1node-all_reduce-mpi8-rocmblog.log");
  std::stringstream text;
  text << in.rdbuf();
  const NcclTestsTable t = parse_nccl_tests_output(text.str(), "rocmblog.log").front();
  CHECK(t.nccl_version == "2.22.3-develop:f5b15f2");
  CHECK(t.nccl_version_library == "RCCL");
  CHECK(t.nccl_version_line == 13);
  CHECK(nccl_version_pricing(t).code == 22203);
  CHECK(t.ranks == 8);
}
