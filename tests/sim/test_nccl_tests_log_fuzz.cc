// nccl-tests logs found by fuzz/fuzz_nccl_tests_log (libFuzzer + ASan), each kept as a case here.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl;
using namespace twinccl::sim;

TEST_CASE("a header whose second 'time' is mangled: the first block reads its own columns",
          "[nccl_tests_log][fuzz]") {
  // The in-place "time" became "time)": the first block ran on to the end of the header, took
  // the second algbw/busbw as its own, was then cut at its #wrong, and a row was read past its
  // values (ASan: heap-buffer-overflow in Reader::block).
  const std::string header =
      "#       size  count   type  redop  root   time  algbw  busbw #wrong  time)  algbw  busbw "
      "#wrong\n";
  const std::string row = "  8  2  float  sum  -1  20.26  1.11  2.22  0  17.74  3.33  4.44  0\n";
  const std::vector<NcclTestsTable> tables =
      parse_nccl_tests_output(header + row, "mangled.log", {"all_reduce", 8, 1});
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].rows.size() == 1);
  const NcclTestsRow& r = tables[0].rows[0];
  REQUIRE(r.out_of_place);
  CHECK(r.out_of_place->time_us == Approx(20.26));
  CHECK(r.out_of_place->algbw_gbps == Approx(1.11));
  CHECK(r.out_of_place->busbw_gbps == Approx(2.22));
}

TEST_CASE("a header whose block has #wrong before algbw is not a layout",
          "[nccl_tests_log][fuzz]") {
  // Cut at #wrong, the block would lose its algbw and busbw: the line is not a column header, and
  // the row is then read with nccl-tests' current layout.
  const std::string header = "#  size  count  type  redop  root  time  #wrong  algbw  busbw  x\n";
  const std::string row = "  8  2  float  sum  -1  20.26  1.11  2.22  0  17.74  3.33  4.44  0\n";
  const std::vector<NcclTestsTable> tables =
      parse_nccl_tests_output(header + row, "wrong-first.log", {"all_reduce", 8, 1});
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].rows.size() == 1);
  CHECK(tables[0].rows[0].out_of_place->algbw_gbps == Approx(1.11));
  CHECK(tables[0].rows[0].in_place->busbw_gbps == Approx(4.44));
}
