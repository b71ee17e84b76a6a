// A log's NCCL version as its rows are priced (nccl_version_pricing): one older than the model's
// oldest tuning model is priced as that one, an unreadable one as the newest, each with a note
// naming the log's line; and the rank bound device lines and --ranks share (kNcclTestsMaxRanks).
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr const char* kTable =
    "# Using devices\n"
    "#  Rank  0 Group 0 Pid 1 on node-a device 0 [0x19] H100\n"
    "#  Rank  1 Group 0 Pid 1 on node-a device 1 [0x19] H100\n"
    "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
    "  8  2  float  sum  -1  20.0  0.00  0.00  0  20.0  0.00  0.00  0\n";

NcclTestsTable with_version_line(const std::string& line) {
  return parse_nccl_tests_output("# nThread 1 nGpus 1\n" + line + "\n" + kTable, "run.log").front();
}

// The ConfigError's message of reading `text` (stdout or -J JSON), "" when it is read.
std::string error_of(const std::string& text, const char* source) {
  try {
    parse_nccl_tests_file_text(text, source);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// One device line of rank `rank` (line 2), then kTable's header and row.
std::string device_log(long long rank) {
  const std::string table(kTable);
  return "# Using devices\n#  Rank  " + std::to_string(rank) +
         " Group 0 Pid 1 on node-a device 0 [0x19] H100\n" + table.substr(table.find("#  size"));
}

std::string json_log(long long rank) {
  return R"({"args": ["./all_reduce_perf"], "config": {"ngpus": 1, "devices": [{"rank": )" +
         std::to_string(rank) + R"(, "hostname": "a"}]}, "results": [{"size": 8, "count": 2,
    "type": "float", "redop": "sum", "root": -1,
    "out_of_place": {"time": 20.0, "alg_bw": 0, "bus_bw": 0}}]})";
}

}  // namespace

TEST_CASE("an NCCL version older than the oldest tuning model is priced as it, with a note",
          "[nccl_tests_log][nccl_version]") {
  // Before: titled "NCCL 2.8.4", priced with the newest model (code 0), nothing said.
  const NcclTestsTable t = with_version_line("host:1:1 [0] NCCL INFO NCCL version 2.8.4+cuda11.2");
  CHECK(t.nccl_version == "2.8.4+cuda11.2");
  CHECK(t.nccl_version_line == 2);
  const NcclVersionPricing p = nccl_version_pricing(t);
  CHECK(p.code == 20900);
  CHECK(p.note ==
        "NCCL version 2.8.4+cuda11.2 at run.log:2 is older than the oldest tuning model (2.9.0); "
        "priced as 2.9.0");
  CHECK(request_of(t, t.rows.front()).nccl_version == 20900);
}

TEST_CASE("an unreadable NCCL version is priced as the newest model, with a note",
          "[nccl_tests_log][nccl_version]") {
  for (const char* version : {"2.26", "2.26.x", "2.x"}) {
    const NcclTestsTable t = with_version_line(std::string("NCCL version ") + version);
    const NcclVersionPricing p = nccl_version_pricing(t);
    CHECK(p.code == 0);
    CHECK(p.note == std::string("unreadable NCCL version '") + version +
                        "' at run.log:2; priced as the newest model (NCCL 2.30.3 and later)");
    CHECK(request_of(t, t.rows.front()).nccl_version == 0);
  }
  const NcclTestsTable future = with_version_line("NCCL version 10.0.0");
  CHECK(nccl_version_pricing(future).code == 0);
  CHECK_THAT(nccl_version_pricing(future).note,
             Catch::StartsWith("NCCL version 10.0.0 at run.log:2 is past NCCL's version codes"));
}

TEST_CASE("only a version line sets the version: not NCCL's warnings, not a word without a digit",
          "[nccl_tests_log][nccl_version]") {
  // Before: the last "NCCL version " anywhere in a line won: the first warning (v2.30.7-1
  // src/dev_runtime.cc:1428) priced the rows as the compiled-with 2.29.2, the second
  // (devcomm_v22902.cc:111) replaced the version with "that".
  const std::string real = "host:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8";
  const std::string compiled =
      "host:1:1 [0] dev_runtime.cc:1428 NCCL WARN NCCL library is too old. This application was "
      "compiled with NCCL version 2.29.2, but is running with NCCL library version 2.26.2.";
  const std::string same =
      "host:1:1 [0] devcomm_v22902.cc:111 NCCL WARN The application was compiled with too old "
      "version of NCCL. ... preferably with the same NCCL version that it will be running with.";
  for (const std::string& warnings : {compiled + "\n" + same, same + "\n" + compiled}) {
    const NcclTestsTable t = with_version_line(real + "\n" + warnings);
    CHECK(t.nccl_version == "2.26.2+cuda12.8");
    CHECK(t.nccl_version_line == 2);
    CHECK(nccl_version_pricing(t).code == 22602);
  }
  // The forms a version line takes: at the start, after "# ", right after "NCCL INFO ".
  CHECK(with_version_line("# NCCL version 2.18.1+cuda12.1").nccl_version == "2.18.1+cuda12.1");
  CHECK(with_version_line("node-a:7:7 [3] NCCL INFO NCCL version 2.18.1+cuda12.1").nccl_version ==
        "2.18.1+cuda12.1");
  // A word that does not start with a digit is no version: the one read before stays.
  const NcclTestsTable kept = with_version_line(real + "\nNCCL version banana");
  CHECK(kept.nccl_version == "2.26.2+cuda12.8");
  CHECK(nccl_version_pricing(kept).note.empty());
  const NcclTestsTable none = with_version_line("NCCL version banana");
  CHECK(none.nccl_version.empty());
  CHECK(nccl_version_pricing(none).note.empty());
}

TEST_CASE("a log's own NCCL version, or none, prices its rows without a note",
          "[nccl_tests_log][nccl_version]") {
  const NcclTestsTable own = with_version_line("NCCL version 2.26.2+cuda12.8");
  CHECK(nccl_version_pricing(own).code == 22602);
  CHECK(nccl_version_pricing(own).note.empty());
  CHECK(request_of(own, own.rows.front()).nccl_version == 22602);
  const NcclTestsTable none = parse_nccl_tests_output(kTable, "run.log").front();
  CHECK(nccl_version_pricing(none).code == 0);
  CHECK(nccl_version_pricing(none).note.empty());
}

TEST_CASE("nccl-tests' NCCL code before 2.9 reads as its version",
          "[nccl_tests_log][nccl_version]") {
  // NCCL_VERSION(2,8,4) = 2804 (nccl.h.in); before: read as "0.28.4".
  const NcclTestsTable t = with_version_line(
      "# nccl-tests version 2.13.8 nccl-headers=2804 "
      "nccl-library=2804");
  CHECK(t.nccl_version == "2.8.4");
  CHECK(nccl_version_pricing(t).code == 20900);
  const std::string json = R"({"args": ["./all_reduce_perf"], "nccl_version": 2804,
    "config": {"ngpus": 1, "devices": [{"rank": 0, "hostname": "a"}]},
    "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
      "out_of_place": {"time": 20.0, "alg_bw": 0, "bus_bw": 0}}]})";
  const NcclTestsTable j = parse_nccl_tests_json(json, "run.json").front();
  CHECK(j.nccl_version == "2.8.4");
  CHECK(nccl_version_pricing(j).note ==
        "NCCL version 2.8.4 at run.json (its nccl_version) is older than the oldest tuning model "
        "(2.9.0); priced as 2.9.0");
}

TEST_CASE("device lines take ranks up to the --ranks bound, kNcclTestsMaxRanks",
          "[nccl_tests_log][ranks]") {
  STATIC_REQUIRE(kNcclTestsMaxRanks == 1 << 20);
  // Before: ranks 1000000 and up were refused while --ranks took up to 2^20.
  CHECK(error_of(device_log(kNcclTestsMaxRanks - 1), "dev.log").empty());
  CHECK_THAT(error_of(device_log(kNcclTestsMaxRanks), "dev.log"),
             Catch::Contains("dev.log:2: a device line with a bad rank (not 0..1048575)"));
  CHECK(error_of(json_log(kNcclTestsMaxRanks - 1), "run.json").empty());
  CHECK_THAT(error_of(json_log(kNcclTestsMaxRanks), "run.json"),
             Catch::Contains("config.devices has rank 1048576, not 0..1048575"));
}

TEST_CASE("a row's root is a rank: the same bound as device lines and --ranks",
          "[nccl_tests_log][ranks]") {
  // Before: roots up to 10000000 were read, though no world the model takes has rank 2^20.
  const auto stdout_log = [](long long root) {
    return "#  size  count  type  redop  root  time  algbw  busbw  #wrong\n  8  2  float  none  " +
           std::to_string(root) + "  20.0  0.00  0.00  0\n";
  };
  const auto json = [](long long root) {
    return R"({"args": ["./broadcast_perf"], "results": [{"size": 8, "count": 2,
      "type": "float", "redop": "none", "root": )" +
           std::to_string(root) +
           R"(, "out_of_place": {"time": 20.0, "alg_bw": 0, "bus_bw": 0}}]})";
  };
  CHECK(error_of(stdout_log(kNcclTestsMaxRanks - 1), "b.log").empty());
  CHECK(error_of(stdout_log(-1), "b.log").empty());
  CHECK_THAT(error_of(stdout_log(kNcclTestsMaxRanks), "b.log"),
             Catch::Contains("b.log:2: root must be -1 or a rank (0..1048575: the model takes at "
                             "most 1048576 ranks)"));
  CHECK_THAT(error_of(stdout_log(-2), "b.log"), Catch::Contains("root must be -1 or a rank"));
  CHECK(error_of(json(kNcclTestsMaxRanks - 1), "b.json").empty());
  CHECK_THAT(error_of(json(kNcclTestsMaxRanks), "b.json"),
             Catch::Contains("results[0].root must be -1 or a rank (0..1048575: the model takes "
                             "at most 1048576 ranks)"));
}

TEST_CASE("an unusable NCCL version code is noted as unreadable, and 0 as none",
          "[nccl_tests_log][nccl_version]") {
  // Before: dropped silently, the rows priced with the newest model and no note.
  const auto json_with = [](const std::string& value) {
    return parse_nccl_tests_json(R"({"args": ["./all_reduce_perf"], "nccl_version": )" + value +
                                     R"(, "config": {"ngpus": 1, "devices": [{"rank": 0,
      "hostname": "a"}]}, "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum",
      "root": -1, "out_of_place": {"time": 20.0, "alg_bw": 0, "bus_bw": 0}}]})",
                                 "run.json")
        .front();
  };
  for (const std::string value : {R"("2.8.4")", "-5", "2.5", "1000000"}) {
    const NcclTestsTable j = json_with(value);
    CHECK(j.nccl_version == value);
    CHECK(nccl_version_pricing(j).code == 0);
    CHECK(nccl_version_pricing(j).note ==
          "unreadable NCCL version '" + value +
              "' at run.json (its nccl_version); priced as the newest model (NCCL 2.30.3 and "
              "later)");
  }
  for (const std::string value : {"banana", "1000000", "-5"}) {
    const NcclTestsTable t =
        with_version_line("# nccl-tests version 2.13.8 nccl-headers=22602 nccl-library=" + value);
    CHECK(t.nccl_version == value);
    CHECK(nccl_version_pricing(t).note ==
          "unreadable NCCL version '" + value +
              "' at run.log:2; priced as the newest model (NCCL 2.30.3 and later)");
  }
  // 0: the library did not say (before: read as "0.0.0", older than the oldest model).
  CHECK(json_with("0").nccl_version.empty());
  CHECK(nccl_version_pricing(json_with("0")).note.empty());
  const NcclTestsTable zero = with_version_line("# nccl-tests version 2.13.8 nccl-library=0");
  CHECK(zero.nccl_version.empty());
  CHECK(nccl_version_pricing(zero).note.empty());
}

TEST_CASE("the version note shows the log's name as an error does: printable, bounded",
          "[nccl_tests_log][nccl_version]") {
  // Before: the raw name, an escape byte and all, reached the terminal.
  const NcclTestsTable t =
      parse_nccl_tests_output("# nThread 1 nGpus 1\nNCCL version 2.8.4\n" + std::string(kTable),
                              "run\x1b[2J.log")
          .front();
  CHECK_THAT(nccl_version_pricing(t).note,
             Catch::StartsWith("NCCL version 2.8.4 at run\\x1b[2J.log:2 is older"));
}
