// Rows of an nccl-tests log that are not read are reported, never dropped: a size or count that
// is not a whole number ("1P", "-16", "2.5") is listed in the table's `skipped` with its line and
// why; a log with only such rows is an error saying so; a garbled row whose columns fit another
// collective than the rest of the table is an error naming both lines (a 1P row with busbw equal
// to algbw used to make an all_reduce log read as sendrecv).
#include <catch2/catch.hpp>
#include <string>

#include "support/error_text.h"
#include "support/nccl_tests_text.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl;
using namespace twinccl::sim;
using Catch::Matchers::Contains;

namespace {

const std::string& kHeader = twinccl_test::kTableHeader;

std::string devices(int ranks) { return twinccl_test::device_block(ranks, ranks); }

std::string error_of(const std::string& text) {
  return twinccl_test::error_text([&] { parse_nccl_tests_output(text, "run.log"); });
}

}  // namespace

TEST_CASE("rows whose size or count is not a whole number are listed with line and why",
          "[nccl_tests_log]") {
  // Lines 1-9 devices, 10 header; all_reduce rows on 8 ranks: busbw = 1.75 x algbw.
  const std::string text =
      devices(8) + kHeader +
      "1P 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0\n"              // 11
      "16 4 float sum -1 39.64 0.00 0.00 0 39.19 0.00 0.00 0\n"              // 12
      "-32 8 float sum -1 39.06 0.00 0.00 0 38.67 0.00 0.00 0\n"             // 13
      "8 more processes have sent help message help-mtl-ofi.txt\n"           // 14: noise
      "64 16.5 float sum -1 38.89 0.00 0.00 0 38.60 0.00 0.00 0\n"           // 15
      "1048576 262144 float sum -1 40.0 26.21 45.87 0 40.0 26.21 45.87 0\n"  // 16
      "2.5e3 625 float sum -1 41.0 0.06 0.11 0 41.0 0.06 0.11 0\n";          // 17
  const std::vector<NcclTestsTable> tables = parse_nccl_tests_output(text, "run.log");
  REQUIRE(tables.size() == 1);
  const NcclTestsTable& t = tables.front();
  CHECK(t.collective == "all_reduce");  // from the columns: the rows read agree
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].line == 12);
  CHECK(t.rows[1].line == 16);
  REQUIRE(t.skipped.size() == 4);
  CHECK(t.skipped[0].line == 11);
  CHECK_THAT(t.skipped[0].why, Contains("size '1P'"));
  CHECK(t.skipped[1].line == 13);
  CHECK_THAT(t.skipped[1].why, Contains("size '-32'") && Contains("negative"));
  CHECK(t.skipped[2].line == 15);
  CHECK_THAT(t.skipped[2].why, Contains("count '16.5'"));
  CHECK(t.skipped[3].line == 17);
  CHECK_THAT(t.skipped[3].why, Contains("size '2.5e3'"));
  // Lines after the last table belong to it; lines before the first row to the first table.
  const std::vector<NcclTestsTable> two = parse_nccl_tests_output(
      devices(8) + kHeader + "-8 2 float sum -1 1 0 0 0 1 0 0 0\n" +
          "8 2 float sum -1 1 0 0 0 1 0 0 0\n# Avg bus bandwidth : 0\n" + devices(8) + kHeader +
          "8 2 float sum -1 1 0 0 0 1 0 0 0\n# Avg bus bandwidth : 0\n" +
          "16P 4 float sum -1 1 0 0 0 1 0 0 0\n",
      "all_reduce.log");
  REQUIRE(two.size() == 2);
  REQUIRE(two[0].skipped.size() == 1);
  CHECK(two[0].skipped[0].line == 11);
  REQUIRE(two[1].skipped.size() == 1);
  CHECK(two[1].skipped[0].line == 26);
}

TEST_CASE("a log whose rows are all unreadable says why, naming lines", "[nccl_tests_log]") {
  const std::string why =
      error_of(devices(2) + kHeader + "1P 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0\n" +
               "-16 4 float sum -1 39.64 0.00 0.00 0 39.19 0.00 0.00 0\n");
  CHECK_THAT(why, Contains("run.log") && Contains("no result row could be read") &&
                      Contains("2 row-like line(s)") && Contains("line 5: the size '1P'") &&
                      Contains("line 6: the size '-16'"));
}

TEST_CASE("a row whose columns fit another collective than the table's is an error",
          "[nccl_tests_log]") {
  // A 2^50-byte row with busbw = algbw (sendrecv's columns) in an all_reduce table (busbw =
  // 1.75 x algbw on 8 ranks): the widest row alone used to decide, and the log read as sendrecv.
  const std::string all_reduce_rows =
      "1048576 262144 float sum -1 40.0 26.21 45.87 0 40.0 26.21 45.87 0\n"
      "2097152 524288 float sum -1 60.0 34.95 61.17 0 60.0 34.95 61.17 0\n";
  const std::string garbled =
      "1125899906842624 281474976710656 float sum -1 4.0e+09 281.47 281.47 0 4.0e+09 281.47 "
      "281.47 0\n";
  const std::string why = error_of(devices(8) + kHeader + all_reduce_rows + garbled);
  CHECK_THAT(why, Contains("run.log:11") && Contains("fit all_reduce") &&
                      Contains("line 13 (the widest row) fit sendrecv") &&
                      Contains("--collective"));
  // --collective settles it; the rows are read as given.
  NcclTestsParseOptions o;
  o.collective = "all_reduce";
  const auto named =
      parse_nccl_tests_output(devices(8) + kHeader + all_reduce_rows + garbled, "run.log", o);
  CHECK(named.front().rows.size() == 3);
  // A real sendrecv log: small rows too rounded to tell, large ones busbw = algbw.
  const auto sendrecv = parse_nccl_tests_output(
      devices(8) + kHeader + "1024 256 float sum -1 20.0 0.05 0.05 0 20.0 0.05 0.05 0\n" +
          "1048576 262144 float sum -1 20.0 52.43 52.43 0 20.0 52.43 52.43 0\n",
      "run.log");
  CHECK(sendrecv.front().collective == "sendrecv");
  const auto all_reduce =
      parse_nccl_tests_output(devices(8) + kHeader + all_reduce_rows, "run.log");
  CHECK(all_reduce.front().collective == "all_reduce");
}

TEST_CASE("a placeholder row names the word where a number belongs", "[nccl_tests_log]") {
  // GoogleCloudPlatform/cluster-toolkit's a3-ultragpu README shows the output it expects so.
  const std::string e = error_of(kHeader +
                                 "   268435456       4194304     float    none      -1    XXXXX  "
                                 "XXX.XX  XXX.XX    N/A   XXXXXX  XXX.XX  XXX.XX      0\n");
  CHECK_THAT(e, Contains("run.log:2: 'XXXXX' (field 6) is not a number, and the column header at "
                         "line 1 has 8 numbers after the 5 leading columns; a placeholder or a "
                         "garbled row: fix or remove it"));
}

TEST_CASE("NCCL's debug line printed into a row says so and how to keep it apart",
          "[nccl_tests_log]") {
  // NVIDIA/nccl-tests#42: "in the middle of the output table there would be a debug line".
  const std::string e =
      error_of(kHeader +
               "  8  2  float  sum  -1node-0:25:109 [0] NCCL INFO Channel 00/0 : 0[0] -> "
               "1[1] via P2P/CUMEM\n  85.70  0.00  0.00  0  74.97  0.00  0.00  0\n");
  CHECK_THAT(e, Contains("run.log:2: NCCL's debug output was printed into this row"));
  CHECK_THAT(e, Contains("NCCL_DEBUG_FILE"));
}
