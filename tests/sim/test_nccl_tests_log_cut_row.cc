// A row that no line break ended (unended_row_cut, nccl_tests_log_row.cc): nccl-tests writes a
// row's line break last, so such a row may be cut anywhere, inside its last field too ("12" cut
// to "1"). It is read only when provably whole, else listed as skipped with why.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl::sim;

namespace {

constexpr const char* kHeader =
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  1 on node-a device  0 [0x19] H100\n"
    "#  Rank  1 Group  0 Pid  2 on node-a device  1 [0x19] H100\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "           8             2     float     sum      -1    30.10    0.00    0.00      0    "
    "30.00    0.00    0.00      0\n";

// The last row (line 6) of a two-row log, as `last` ends it: no line break after it.
NcclTestsTable with_last(const std::string& last, const char* header = kHeader) {
  const std::vector<NcclTestsTable> tables =
      parse_nccl_tests_output(std::string(header) + last, "all_reduce.log");
  REQUIRE(tables.size() == 1);
  return tables.front();
}

constexpr const char* kRow16 =
    "          16             4     float     sum      -1    30.50    0.00"
    "    0.00      0    30.40    0.00    0.00";

}  // namespace

TEST_CASE("a last row cut inside its last field is skipped, saying why", "[nccl_tests_log]") {
  // Before: read, its #wrong 12 as 1 (and any last field cut short likewise).
  const NcclTestsTable t = with_last(std::string(kRow16) + "      1");
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].size_bytes == 8);
  REQUIRE(t.skipped.size() == 1);
  CHECK(t.skipped[0].line == 6);
  CHECK_THAT(t.skipped[0].why, Catch::Contains("no line break ends this row") &&
                                   Catch::Contains("'1'") &&
                                   Catch::Contains("end the log with a line break"));
  // A busbw cut short where it is the last field (a header without #wrong), and a per-iteration
  // row's i_cv% ("12.5" cut to "12"): the same.
  const NcclTestsTable no_wrong = with_last(
      "          16             4     float     sum      -1    30.50    0.00    0.00    30.40    "
      "0.00    0.0",
      "#  size  count  type  redop  root  time  algbw  busbw  time  algbw  busbw\n"
      "   8  2  float  sum  -1  30.10  0.00  0.00  30.00  0.00  0.00\n");
  CHECK(no_wrong.rows.size() == 1);
  REQUIRE(no_wrong.skipped.size() == 1);
  CHECK_THAT(no_wrong.skipped[0].why, Catch::Contains("'0.0' may be cut short"));
  const NcclTestsTable iters = with_last(
      "16 4 float sum -1 40.12 0.00 0.00 0 39.0 44.0 43.9 2.1 38.85 0.00 0.00 0 38.0 40.0 39.9 12",
      "#  size count type redop root time algbw busbw #wrong i_min i_max i_p99 i_cv% time "
      "algbw busbw #wrong i_min i_max i_p99 i_cv%\n"
      "8 2 float sum -1 40.12 0.00 0.00 0 39.0 44.0 43.9 2.1 38.85 0.00 0.00 0 38.0 40.0 39.9 "
      "1.2\n");
  CHECK(iters.rows.size() == 1);
  CHECK(iters.skipped.size() == 1);
}

TEST_CASE("a last row read without its line break only when provably whole", "[nccl_tests_log]") {
  // A 0 in a "#wrong" column (a count printed with %g: no longer one starts with 0), "N/A", a
  // space after the last field, a column after the values or a CRLF log's '\r': whole. (Before
  // too: these pin that the rule above does not drop whole rows.)
  for (const std::string& whole :
       {std::string(kRow16) + "      0", std::string(kRow16) + "    N/A",
        std::string(kRow16) + "     12 ", std::string(kRow16) + "     12\r"}) {
    INFO(whole);
    const NcclTestsTable t = with_last(whole);
    CHECK(t.rows.size() == 2);
    CHECK(t.skipped.empty());
  }
  const NcclTestsTable stamped = with_last(
      "16 4 float sum -1 40.12 0.00 0.00 3 38.85 0.00 0.00 12  2025-05-22 07:3",
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong timestamp\n"
      "8 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0  2025-05-22 07:36:17\n");
  REQUIRE(stamped.rows.size() == 2);
  CHECK(stamped.rows[1].in_place->wrong == 12);
  // A 0 that may be a piece: without a column header (the layout is assumed, not known) and in
  // the pre-2022 float error column ("0e+00" cut to "0"). Before: both read.
  const std::string cut_error = "16 4 float sum -1 30.50 0.00 0.00 0e+00 30.40 0.00 0.00 0";
  const NcclTestsTable headerless =
      with_last(cut_error, "8 2 float sum -1 30.10 0.00 0.00 0 30.00 0.00 0.00 0\n");
  CHECK(headerless.rows.size() == 1);
  CHECK(headerless.skipped.size() == 1);
  const NcclTestsTable old_error =
      with_last(cut_error,
                "#  size count type redop root time algbw busbw error time algbw busbw error\n"
                "8 2 float sum -1 30.10 0.00 0.00 0e+00 30.00 0.00 0.00 0e+00\n");
  CHECK(old_error.rows.size() == 1);
  CHECK(old_error.skipped.size() == 1);
  // That column's whole zero, "0e+00" (%5.0le of 0), is read.
  CHECK(with_last(cut_error + "e+00",
                  "#  size count type redop root time algbw busbw error time algbw busbw error\n")
            .rows.size() == 1);
}

TEST_CASE("a rank's row its output left unfinished is skipped when its last field may be cut",
          "[nccl_tests_log]") {
  // Open MPI's tags: rank 0 wrote its whole row but for the line break, then the log ended.
  const std::string tag = "[1,0]<stdout>:";
  std::string text;
  for (const char* line :
       {"# Using devices", "#  Rank  0 Group  0 Pid  1 on node-a device  0 [0x19] H100",
        "#  Rank  1 Group  0 Pid  2 on node-a device  1 [0x19] H100",
        "#  size count type redop root time algbw busbw #wrong time algbw "
        "busbw #wrong",
        "  8  2  float  sum  -1  30.10  0.00  0.00  0  30.00  0.00  0.00  0"})
    text += tag + line + "\n";
  const auto last = [&](const std::string& wrong) {
    return parse_nccl_tests_output(text + tag + "  16  4  float  sum  -1" + tag +
                                       "  30.50  0.00  0.00  0" + tag + "  30.40  0.00  0.00  " +
                                       wrong + "[1,1]<stdout>:node-a:2:2 [1] NCCL INFO exit\n",
                                   "all_reduce.log")
        .front();
  };
  // Before: read with #wrong 1.
  const NcclTestsTable cut = last("1");
  CHECK(cut.rows.size() == 1);
  REQUIRE(cut.skipped.size() == 1);
  CHECK(cut.skipped[0].line == 6);
  CHECK_THAT(cut.skipped[0].why, Catch::Contains("no line break ends this row"));
  CHECK(last("0").rows.size() == 2);
}

TEST_CASE("a hypercube row's blank redop counts when telling a cut value from a column after",
          "[nccl_tests_log]") {
  // hypercube_perf prints redop blank: 12 values and a timestamp cut to one token are 13 tokens,
  // the layout's 13 fields. Counting the blank (ends_in_value), the last token is the timestamp's
  // piece and the row is whole; not counting it, that piece would be taken for a cut busbw.
  const char* header =
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong timestamp\n"
      "8 2 float -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0  2025-05-22 07:36:17\n";
  const NcclTestsTable stamped =
      with_last("16 4 float -1 40.12 0.00 0.00 3 38.85 0.00 0.00 12  2025-05-2", header);
  REQUIRE(stamped.rows.size() == 2);
  CHECK(stamped.rows[1].redop_blank);
  CHECK(stamped.rows[1].in_place->wrong == 12);
  CHECK(stamped.skipped.empty());
  // Cut inside its last value instead: skipped.
  const NcclTestsTable cut = with_last("16 4 float -1 40.12 0.00 0.00 3 38.85 0.00 0.00 1", header);
  CHECK(cut.rows.size() == 1);
  REQUIRE(cut.skipped.size() == 1);
  CHECK_THAT(cut.skipped[0].why, Catch::Contains("'1' may be cut short"));
}

TEST_CASE("a last 0 under a column whose kind the header does not say is skipped",
          "[nccl_tests_log]") {
  // "#errors" (or "res", "wrong") names no format nccl-tests printed: its "0" may be a piece of
  // a longer field, unlike "#wrong"'s (%g: no longer count starts with 0).
  const NcclTestsTable t =
      with_last("16 4 float sum -1 30.50 0.00 0.00 0 30.40 0.00 0.00 0",
                "#  size count type redop root time algbw busbw #errors time algbw busbw #errors\n"
                "8 2 float sum -1 30.10 0.00 0.00 0 30.00 0.00 0.00 0\n");
  CHECK(t.rows.size() == 1);
  REQUIRE(t.skipped.size() == 1);
  CHECK_THAT(t.skipped[0].why, Catch::Contains("'0' may be cut short"));
}
