// Launcher tags inside lines (nccl_tests_log_launcher.cc): Open MPI's --tag-output puts
// "[1,0]<stdout>:" before every write of a rank, and nccl-tests prints a row in three writes, so a
// published log (KeitaW/p5-nccl-test-2024-07-19, tests/fidelity/logs SOURCES.md) has the tag in
// the middle of each row; another rank's write between two of them splits the row over two lines.
#include <catch2/catch.hpp>
#include <string>

#include "support/error_text.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr const char* kTag = "[1,0]<stdout>:";

// The device block and column header of a 2-rank run, each line tagged as rank 0 printed it.
std::string tagged_header() {
  std::string text;
  for (const char* line :
       {"# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 100",
        "# Using devices", "#  Rank  0 Group  0 Pid  25 on node-0 device  0 [0x53] H100",
        "#  Rank  1 Group  0 Pid  25 on node-1 device  0 [0x53] H100",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
        "time   algbw   busbw #wrong"}) {
    text += std::string(kTag) + line + "\n";
  }
  return text;
}

// The same with another launcher tag ("[2,0]<stdout>:": a second job of the same mpirun).
std::string retagged(std::string text, const std::string& tag) {
  for (std::size_t at = text.find(kTag); at != std::string::npos;
       at = text.find(kTag, at + tag.size()))
    text.replace(at, std::string(kTag).size(), tag);
  return text;
}

// A row as nccl-tests writes it: the leading columns, then each timed block, each write tagged.
std::string tagged_row(const std::string& size, const std::string& oop, const std::string& ip) {
  return std::string(kTag) + "  " + size + "  " + std::to_string(std::stoull(size) / 4) +
         "  float  sum  -1" + kTag + "  " + oop + "  0.00  0.00  0" + kTag + "  " + ip +
         "  0.00  0.00  0\n";
}

NcclTestsTable one(const std::string& text) {
  std::vector<NcclTestsTable> t = parse_nccl_tests_file_text(text, "all_reduce.log");
  REQUIRE(t.size() == 1);
  return t.front();
}

std::string error_of(const std::string& text) {
  return twinccl_test::error_text([&] { parse_nccl_tests_file_text(text, "all_reduce.log"); });
}

}  // namespace

TEST_CASE("Open MPI's tag before each write of a row is taken out, wherever it stands",
          "[nccl_tests_log]") {
  const NcclTestsTable t =
      one(tagged_header() + tagged_row("8", "85.70", "74.97") + tagged_row("16", "63.44", "63.31") +
          kTag + "# Avg bus bandwidth    : 0.001\n");
  CHECK(t.ranks == 2);
  CHECK(t.nodes == 2);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].size_bytes == 8);
  CHECK(t.rows[0].out_of_place->time_us == Approx(85.70));
  CHECK(t.rows[0].in_place->time_us == Approx(74.97));
  CHECK(t.rows[1].out_of_place->time_us == Approx(63.44));
  CHECK(t.complete);
  // stderr's tag too (a stream of its own), and the indentation a copy out of a document (a
  // Markdown list) adds.
  const std::string err = "[1,0]<stderr>:";
  const NcclTestsTable indented =
      one("   " + tagged_header() + "   " + err + "  8  2  float  sum  -1" + err +
          "  40.0  0.00  0.00  0" + err + "  39.0  0.00  0.00  0\n");
  CHECK(indented.rows.at(0).in_place->time_us == Approx(39.0));
}

TEST_CASE("a row split by another rank's write is joined again, that rank's line kept as its own",
          "[nccl_tests_log]") {
  const std::string text =
      tagged_header() + kTag + "  8  2  float  sum  -1" +
      "[1,7]<stdout>:node-0:37:111 [7] NCCL INFO NCCL_ALGO set by environment to Ring\n" + kTag +
      "  85.70  0.00  0.00  0" + kTag + "  74.97  0.00  0.00  0\n" +
      tagged_row("16", "63.44", "63.31");
  const NcclTestsTable t = one(text);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].out_of_place->time_us == Approx(85.70));
  CHECK(t.rows[0].in_place->time_us == Approx(74.97));
  CHECK(t.rows[0].line == 6);  // where the row began
  CHECK(t.rows[1].size_bytes == 16);
  CHECK(t.nccl_algo == "Ring");  // rank 7's line, read as a line of its own
}

TEST_CASE("only Open MPI's exact tag is taken out of a line", "[nccl_tests_log]") {
  // Something like a tag that is not one stays: the row does not fit and says so.
  for (const std::string& near : {std::string("[1,0]<stdout>"), std::string("[a,0]<stdout>:"),
                                  std::string("[1,0]<stdin>:"), std::string("[1 0]<stdout>:")}) {
    INFO(near);
    const std::string e = error_of(tagged_header() + kTag + "  8  2  float  sum  -1" + near +
                                   "  40.0  0.00  0.00  0  39.0  0.00  0.00  0\n");
    CHECK(e.find("all_reduce.log:6: ") != std::string::npos);
    CHECK(e.find(near) != std::string::npos);
  }
}

TEST_CASE("a tagged line longer than a log line is refused, and a log cut mid-row says where",
          "[nccl_tests_log]") {
  std::string text = tagged_header();
  for (int i = 0; i < 1200; ++i) text += std::string(kTag) + "  12345678901234";
  const std::string e = error_of(text + "\n");
  CHECK(e.find("all_reduce.log:6: ") != std::string::npos);
  CHECK(e.find("longer than 16384") != std::string::npos);
  // A log cut mid-row (its last line has no line break), tagged or not: the rows before are read
  // and the cut row is listed as skipped with its line, not read and not a refusal of the log.
  const std::string plain_header =
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "   8  2  float  sum  -1  85.70  0.00  0.00  0  74.97  0.00  0.00  0\n";
  for (const std::string& cut :
       {tagged_header() + tagged_row("8", "85.70", "74.97") + kTag + "  16  4  float  sum  -1",
        tagged_header() + tagged_row("8", "85.70", "74.97") + kTag + "  16  4  float  sum  -1" +
            kTag + "  63.44  0.00",
        tagged_header() + tagged_row("8", "85.70", "74.97") + kTag + "  16  4  float  sum  -1" +
            kTag + "  63.44  0.00  0.00  0" + kTag,
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 16\n# Using devices\n#  Rank  0 Group  0 Pid  25 "
        "on node-0 device  0 [0x53] H100\n"
        "#  Rank  1 Group  0 Pid  25 on node-1 device  0 [0x53] H100\n" +
            plain_header + "  16  4  float  sum  -1  63.44  0.00"}) {
    INFO(cut);
    const NcclTestsTable t = one(cut);
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0].in_place->time_us == Approx(74.97));
    REQUIRE(t.skipped.size() == 1);
    CHECK(t.skipped[0].line == 7);
    CHECK_THAT(t.skipped[0].why, Catch::Contains("ends in the middle of this row"));
  }
  // A last row that is whole reads without its line break.
  CHECK(one(tagged_header() + tagged_row("8", "85.70", "74.97") + kTag + "  16  4  float  sum  -1" +
            kTag + "  63.44  0.00  0.00  0" + kTag + "  63.31  0.00  0.00  0")
            .rows.size() == 2);
}

TEST_CASE("SageMaker's tag and the date of mpirun --timestamp-output are taken out with the tag",
          "[nccl_tests_log]") {
  // Both seen in published logs: "[1,mpirank:0,algo-1]<stdout>:algo-1:79:1300 [0] NCCL INFO ...",
  // "Thu Jun 18 14:28:35 2020[1,2]<stderr>:2020-06-18 14:28:35.296902: W tensorflow/...".
  const std::string sm = "[1,mpirank:0,algo-1]<stdout>:";
  const NcclTestsTable sagemaker = one(
      sm + "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n" + sm +
      "  8  2  float  sum  -1" + sm + "  40.0  0.00  0.00  0" + sm + "  39.0  0.00  0.00  0\n");
  CHECK(sagemaker.rows.at(0).in_place->time_us == Approx(39.0));
  const std::string at = "Thu Jun 18 14:28:35 2020[1,0]<stdout>:";
  const std::string later = "Thu Jun  4 14:28:36 2020[1,0]<stdout>:";
  const NcclTestsTable stamped =
      one(at + "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n" +
          at + "  8  2  float  sum  -1" + later + "  40.0  0.00  0.00  0" + later +
          "  39.0  0.00  0.00  0\n");
  CHECK(stamped.rows.at(0).out_of_place->time_us == Approx(40.0));
  CHECK(stamped.rows.at(0).in_place->time_us == Approx(39.0));
}

TEST_CASE("a row a rank never finished (the run stopped mid-row) is listed as skipped",
          "[nccl_tests_log]") {
  // nccl-tests prints a row's leading columns before it runs the size: a rank that fails there
  // leaves them unfinished, and the rows before are still measurements.
  const std::vector<NcclTestsTable> tables = parse_nccl_tests_file_text(
      tagged_header() + tagged_row("8", "85.70", "74.97") + kTag + "  16  4  float  sum  -1" +
          "[1,3]<stderr>:node-1: Test NCCL failure common.cu:1204 'unhandled cuda error'\n" +
          "[1,3]<stderr>: .. node-1 pid 25: Test failure common.cu:915\n",
      "all_reduce.log");
  REQUIRE(tables.size() == 1);
  const NcclTestsTable& t = tables.front();
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].out_of_place->time_us == Approx(85.70));
  CHECK_FALSE(t.complete);
  REQUIRE(t.skipped.size() == 1);
  CHECK(t.skipped[0].line == 7);
  CHECK_THAT(t.skipped[0].why, Catch::Contains("ends in the middle of this row"));
}

TEST_CASE("a log leaving a line unfinished on thousands of streams is refused, not held",
          "[nccl_tests_log][hostile]") {
  // Each line ends only its last stream's line: 6 lines of 800 tags would leave 4794 open.
  std::string text;
  for (int line = 0; line < 6; ++line) {
    for (int rank = 0; rank < 800; ++rank)
      text += "[1," + std::to_string(line * 800 + rank) + "]<stdout>:x";
    text += "\n";
  }
  const std::string e = error_of(text);
  CHECK(e.find("all_reduce.log:6: more than 4096 launcher streams with an unfinished line at "
               "once") != std::string::npos);
  // Streams whose lines ended are not kept: 20000 ranks' whole lines are fine.
  std::string whole = tagged_header();
  for (int rank = 0; rank < 20000; ++rank)
    whole += "[1," + std::to_string(rank) + "]<stdout>:node:1:1 [0] NCCL INFO Init COMPLETE\n";
  CHECK(one(whole + tagged_row("8", "85.70", "74.97")).rows.size() == 1);
}

TEST_CASE("a row cut after its out-of-place block is skipped, not read as in-place only",
          "[nccl_tests_log]") {
  // Rank 0 printed the leading columns and the out-of-place block of 16 bytes, then rank 3 failed:
  // 9 fields have the shape of a row whose out-of-place block was blank.
  const NcclTestsTable t = one(tagged_header() + tagged_row("8", "85.70", "74.97") + kTag +
                               "  16  4  float  sum  -1" + kTag + "  63.44  0.00  0.00  0" +
                               "[1,3]<stdout>:host:1:1 [3] Test NCCL failure common.cu:100\n");
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].size_bytes == 8);
  REQUIRE(t.skipped.size() == 1);
  CHECK(t.skipped[0].line == 7);
  CHECK_THAT(t.skipped[0].why, Catch::Contains("ends in the middle of this row"));
}

TEST_CASE("a whole last row of a run with no out-of-place block says how to read it",
          "[nccl_tests_log]") {
  // nccl-tests' writeBenchMarkLineNullBody (rccl-tests with out-of-place off) leaves the block
  // blank: without its line break the row cannot be told from one cut there. Before: the message
  // said only that not all of its columns were printed.
  const std::string header =
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "   8  2  float  sum  -1  74.97  0.00  0.00  0\n";
  const std::string row = "  16  4  float  sum  -1  74.97  0.00  0.00  0";
  const NcclTestsTable cut = one(header + row);
  CHECK(cut.rows.size() == 1);
  REQUIRE(cut.skipped.size() == 1);
  CHECK_THAT(cut.skipped[0].why,
             Catch::Contains("or the run printed no out-of-place block") &&
                 Catch::Contains("if the row is whole, end the log with a line break"));
  const NcclTestsTable ended = one(header + row + "\n");
  REQUIRE(ended.rows.size() == 2);
  CHECK(ended.rows[1].in_place->time_us == Approx(74.97));
  CHECK_FALSE(ended.rows[1].out_of_place.has_value());
}

TEST_CASE("a row a run left unfinished stays in its run's table when the next run starts",
          "[nccl_tests_log]") {
  const std::string dead = tagged_header() + tagged_row("8", "85.70", "74.97") + kTag +
                           "  16  4  float  sum  -1" + kTag + "  63.44  0.00  0.00  0" +
                           "[1,3]<stdout>:host:1:1 [3] Test NCCL failure common.cu:100\n" +
                           "mpirun has exited due to process rank 3\n";
  // The next job of the same mpirun ([2,0]), and a second mpirun whose rank 0 is [1,0] again:
  // its "# nThread" header would join the dead row.
  for (const std::string& tag : {std::string("[2,0]<stdout>:"), std::string(kTag)}) {
    INFO(tag);
    const std::vector<NcclTestsTable> tables = parse_nccl_tests_file_text(
        dead + retagged(tagged_header() + tagged_row("32", "64.00", "63.36"), tag),
        "all_reduce.log");
    REQUIRE(tables.size() == 2);
    CHECK(tables[0].rows.size() == 1);
    REQUIRE(tables[0].skipped.size() == 1);
    CHECK(tables[0].skipped[0].line == 7);
    REQUIRE(tables[1].rows.size() == 1);
    CHECK(tables[1].rows[0].size_bytes == 32);
    CHECK(tables[1].skipped.empty());
  }
  // A run header before a line's first tag (untagged, another rank's write after it on the same
  // line) ends the dead row too, before the header is read.
  const std::string cut = dead.substr(0, dead.find("mpirun has exited"));
  std::string next = tagged_header();
  next = next.substr(next.find('\n') + 1);  // the header without its tagged "# nThread" line
  const std::vector<NcclTestsTable> untagged = parse_nccl_tests_file_text(
      cut +
          "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 100" +
          "[1,5]<stdout>:host:1:1 [5] NCCL INFO Connected all trees\n" + next +
          tagged_row("32", "64.00", "63.36"),
      "all_reduce.log");
  REQUIRE(untagged.size() == 2);
  CHECK(untagged[0].skipped.size() == 1);
  REQUIRE(untagged[1].rows.size() == 1);
  CHECK(untagged[1].skipped.empty());
  // A '#' line of the same rank ends its unfinished line: nccl-tests never writes one mid-row.
  const NcclTestsTable footer =
      one(tagged_header() + tagged_row("8", "85.70", "74.97") + kTag + "  16  4  float  sum  -1" +
          kTag + "# Out of bounds values : 0 OK\n" + kTag + "# Avg bus bandwidth    : 0.001\n");
  CHECK(footer.rows.size() == 1);
  CHECK(footer.skipped.size() == 1);
  CHECK(footer.complete);
}
