// `twinccl perf --backend nccl` as a user runs it, on the recording NCCL double instead of GPUs
// (TWINCCL_NCCL_LIBRARY and TWINCCL_CUDART_LIBRARY point at it; it has 8 "GPUs" and moves the data
// in host memory, so #wrong is checked for real). One process drives every GPU.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

using twinccl_test::count_of;

TEST_CASE("perf --backend nccl: the launcher's world, one communicator per rank for the sweep",
          "[cli]") {
  twinccl_test::ScratchDir dir("perf_nccl_double");
  const std::string log = (dir.dir / "double.log").string();
  const std::string env = std::string("TWINCCL_NCCL_LIBRARY=") + TWINCCL_NCCL_DOUBLE_PATH +
                          " TWINCCL_CUDART_LIBRARY=" + TWINCCL_NCCL_DOUBLE_PATH +
                          " TWINCCL_DOUBLE_LOG_FILE=" + log;
  const auto r = twinccl_test::run_cli(
      "perf --backend nccl -b 1K -e 1M -f 32 all_reduce all_gather sendrecv hypercube", env, 120);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  // No --ranks: the world is every GPU of a process started alone (8 on the double), not 8 by
  // default and refused elsewhere: 8 devices listed in each of the 4 tables.
  CHECK(count_of(r.out, "Group  0 Pid") == 4 * 8);
  CHECK(r.out.find("# Out of bounds values : 0 OK") != std::string::npos);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  INFO(text.str().substr(0, 2000));
  // 12 rows (4 tests x 3 sizes) and a world-size probe: two inits per GPU, not 13.
  CHECK(count_of(text.str(), "ncclCommInitRankConfig") == 2 * 8);
  CHECK(count_of(text.str(), "VIOLATION") == 0);
}

TEST_CASE("perf --backend nccl: every dtype and op checks clean whatever NCCL's fold order",
          "[cli]") {
  // NCCL reduces in its own order (the double: rank order), not the emulator's ring order that
  // the reference follows: the old inputs (inexact fractions) counted rounding differences as
  // #wrong (27200 of 65536 elements of an 8-rank 32 KiB float all_reduce). 6 ranks: avg is not a
  // power of two there, so NCCL's scale-then-sum and the reference's sum-then-divide differ by
  // rounding within the documented tolerance.
  const std::string env = std::string("TWINCCL_DOUBLE_DEVICE_COUNT=6 TWINCCL_NCCL_LIBRARY=") +
                          TWINCCL_NCCL_DOUBLE_PATH +
                          " TWINCCL_CUDART_LIBRARY=" + TWINCCL_NCCL_DOUBLE_PATH;
  const auto r = twinccl_test::run_cli(
      "perf --backend nccl -b 1K -e 64K -f 64 -d all -o all all_reduce reduce_scatter", env, 120);
  INFO(r.out.substr(0, 4000));
  REQUIRE(r.exit_code == 0);
  CHECK(count_of(r.out, "# Out of bounds values : 0 OK") == 2);
  CHECK(r.out.find("FAILED") == std::string::npos);
}

TEST_CASE("perf --backend nccl: one GPU skips float8 mulsum rows NCCL cannot run, with a note",
          "[cli]") {
  // On an H200 `-d all -o all` ended at the first float8 mulsum row (NCCL's one-rank path cannot
  // scale float8; the backend refuses the call as NCCL would).
  const std::string env = std::string("TWINCCL_DOUBLE_DEVICE_COUNT=1 TWINCCL_NCCL_LIBRARY=") +
                          TWINCCL_NCCL_DOUBLE_PATH +
                          " TWINCCL_CUDART_LIBRARY=" + TWINCCL_NCCL_DOUBLE_PATH;
  const auto r =
      twinccl_test::run_cli("perf --backend nccl -b 1K -e 1K -d f8e4m3 -o all all_reduce", env, 60);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("skipped: mulsum (premul_sum) on float8 with one rank") != std::string::npos);
  CHECK(r.out.find("f8e4m3  mulsum") == std::string::npos);  // no such row
  CHECK(r.out.find("f8e4m3     avg") != std::string::npos);  // the other ops ran
  CHECK(r.out.find("# Out of bounds values : 0 OK") != std::string::npos);
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
