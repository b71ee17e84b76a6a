// `twinccl perf --backend nccl` issues its calls as nccl-tests 2.19 times them (cli/perf_timing.h),
// checked on the recording NCCL double's log of every NCCL call (2 "GPUs", one process): the
// warmup once per sweep at sizes doubling from -b to -e, one untimed call per row and placement,
// -n timed calls, -m calls in one group, -z's barriers, -G's CUDA graph capture and launches; and
// the table says NCCL chose the algorithm. The times themselves are the double's, not a GPU's:
// nothing here is a timing check.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace {

struct LoggedRun {
  twinccl_test::CliResult result;
  std::string log;
};

LoggedRun run_on_double(const std::string& flags, const std::string& name,
                        const std::string& extra_env = "") {
  twinccl_test::ScratchDir dir(name);
  const std::string log = (dir.dir / "double.log").string();
  const std::string env = std::string("TWINCCL_DOUBLE_DEVICE_COUNT=2 TWINCCL_NCCL_LIBRARY=") +
                          TWINCCL_NCCL_DOUBLE_PATH +
                          " TWINCCL_CUDART_LIBRARY=" + TWINCCL_NCCL_DOUBLE_PATH +
                          " TWINCCL_DOUBLE_LOG_FILE=" + log + " " + extra_env;
  LoggedRun r{twinccl_test::run_cli("perf --backend nccl " + flags, env, 60), ""};
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  r.log = text.str();
  return r;
}

// Lines of the log holding every one of `parts`.
std::size_t lines_with(const std::string& log, std::initializer_list<const char*> parts) {
  std::istringstream in(log);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const char* p : parts) all = all && line.find(p) != std::string::npos;
    n += all ? 1 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("perf --backend nccl: warmup once per sweep at doubling sizes, then sync + -n per row",
          "[cli]") {
  // float (type=7) all_reduce, 2 ranks, rows 1K and 4K (counts 256, 1024); warmup at 1K, 2K, 4K.
  const LoggedRun r = run_on_double("-b 1K -e 4K -f 4 -n 3 -w 2 -c 0 all_reduce", "nccl_timing");
  INFO(r.result.out << r.log.substr(0, 3000));
  REQUIRE(r.result.exit_code == 0);
  const char* ar = "ncclAllReduce";
  // per rank: 2 warmup + 2 placements x (1 untimed + 3 timed); 2K only warms up (2 per rank).
  CHECK(lines_with(r.log, {ar, " count=256 type=7 "}) == 2 * (2 + 2 * (1 + 3)));
  CHECK(lines_with(r.log, {ar, " count=512 type=7 "}) == 2 * 2);
  CHECK(lines_with(r.log, {ar, " count=1024 type=7 "}) == 2 * (2 + 2 * (1 + 3)));
  CHECK(lines_with(r.log, {ar, " count=1024 type=7 ", "inplace=1"}) == 2 * (1 + 3));
  CHECK(lines_with(r.log, {"VIOLATION"}) == 0);
  // NCCL chose the algorithm: no row claims one it did not choose.
  CHECK(r.result.out.find("NCCL chose") != std::string::npos);
  CHECK(r.result.out.find("NCCL's own choice") != std::string::npos);
  CHECK(r.result.out.find(" ring") == std::string::npos);
}

TEST_CASE("perf --backend nccl: -m calls in one group, -z 1 a barrier after each call", "[cli]") {
  const LoggedRun grouped =
      run_on_double("-b 1K -e 1K -n 3 -m 2 -w 0 -c 0 all_reduce", "nccl_timing_m");
  INFO(grouped.result.out << grouped.log.substr(0, 3000));
  REQUIRE(grouped.result.exit_code == 0);
  // per rank and placement: 3 iterations x 2 calls inside a group; the untimed call outside.
  CHECK(lines_with(grouped.log, {"ncclAllReduce", " count=256 type=7 ", "group=1"}) == 2 * 2 * 6);
  CHECK(lines_with(grouped.log, {"ncclAllReduce", " count=256 type=7 ", "group=0"}) == 2 * 2 * 1);
  // Barriers are one-int32 all_reduces (type=2): -z 1 adds one per timed call (3 per placement).
  const LoggedRun plain = run_on_double("-b 1K -e 1K -n 3 -w 0 -c 0 all_reduce", "nccl_timing_z0");
  const LoggedRun blocking =
      run_on_double("-b 1K -e 1K -n 3 -w 0 -c 0 -z 1 all_reduce", "nccl_timing_z1");
  REQUIRE(plain.result.exit_code == 0);
  REQUIRE(blocking.result.exit_code == 0);
  const std::size_t barriers0 = lines_with(plain.log, {"ncclAllReduce", " count=1 type=2 "});
  const std::size_t barriers1 = lines_with(blocking.log, {"ncclAllReduce", " count=1 type=2 "});
  CHECK(barriers1 == barriers0 + 2 * 2 * 3);
  CHECK(blocking.result.out.find("-z 1") == std::string::npos);  // not listed as ignored
}

TEST_CASE("perf --backend nccl -G: -n iterations captured once, the graph launched -G times",
          "[cli]") {
  // nccl-tests' BenchTime with -G: per rank and placement, 1 untimed call, then -n 3 calls captured
  // (not run) and 2 launches of the graph; the -c check call is captured and launched once too.
  const LoggedRun r = run_on_double("-b 1K -e 1K -n 3 -w 0 -c 1 -G 2 all_reduce", "nccl_G");
  INFO(r.result.out << r.log.substr(0, 4000));
  REQUIRE(r.result.exit_code == 0);
  const char* ar = "ncclAllReduce";
  CHECK(lines_with(r.log, {ar, " count=256 type=7 ", "captured=1"}) == 2 * 2 * (3 + 1));
  CHECK(lines_with(r.log, {ar, " count=256 type=7 "}) == 2 * 2 * (1 + 3 + 1));
  CHECK(lines_with(r.log, {"cudaStreamBeginCapture", "mode=thread_local"}) == 2 * 2 * 2);
  CHECK(lines_with(r.log, {"cudaStreamEndCapture", "launches=3"}) == 2 * 2);
  CHECK(lines_with(r.log, {"cudaGraphLaunch", "launches=3"}) == 2 * 2 * 2);
  CHECK(lines_with(r.log, {"cudaGraphLaunch", "launches=1"}) == 2 * 2);
  CHECK(lines_with(r.log, {"cudaGraphExecDestroy"}) == 2 * 2 * 2);
  CHECK(lines_with(r.log, {"VIOLATION"}) == 0);
  CHECK(r.result.out.find("# Out of bounds values : 0 OK") != std::string::npos);
  CHECK(r.result.out.find("ignored here") == std::string::npos);
  CHECK(r.result.out.find("graph: 2") != std::string::npos);
  // -z 1/2 would wait inside the capture: refused; -z 3 is turned off as nccl-tests does.
  const LoggedRun z1 = run_on_double("-b 1K -e 1K -n 1 -c 0 -G 1 -z 1 all_reduce", "nccl_G_z1");
  CHECK(z1.result.exit_code != 0);
  CHECK(z1.result.out.find("-z 1 with -G 1") != std::string::npos);
  const LoggedRun z3 = run_on_double("-b 1K -e 1K -n 1 -c 0 -G 1 -z 3 all_reduce", "nccl_G_z3");
  CHECK(z3.result.exit_code == 0);
  CHECK(z3.result.out.find("blocking disabled, as nccl-tests does") != std::string::npos);
  // The emulator has no CUDA graphs: a typed error naming the flag, not a silent ignore.
  const auto emu =
      twinccl_test::run_cli("perf --backend emu --ranks 2 -b 1K -e 1K -G 1 all_reduce");
  CHECK(emu.exit_code != 0);
  CHECK(emu.out.find("-G 1: CUDA graphs exist on the NCCL backend only") != std::string::npos);
}

TEST_CASE("perf --backend nccl -a: the time is combined over the ranks by NCCL's min or max",
          "[cli]") {
  // nccl-tests' Allreduce(deltaSec, average): -a 2 min, -a 3 max, -a 1 the mean (a sum / ranks):
  // one float64 (type=8) all_reduce per row and placement with that op (ncclMax 2, ncclMin 3).
  for (const auto& [flag, op] :
       {std::pair{"-a 2", " op=3 "}, std::pair{"-a 3", " op=2 "}, std::pair{"-a 1", " op=0 "}}) {
    const LoggedRun r =
        run_on_double(std::string("-b 1K -e 1K -n 1 -w 0 -c 0 ") + flag + " all_reduce",
                      std::string("nccl_a") + flag[3]);
    INFO(flag << "\n" << r.result.out);
    REQUIRE(r.result.exit_code == 0);
    CHECK(lines_with(r.log, {"ncclAllReduce", " count=1 type=8 ", op}) == 2 * 2);
    CHECK(lines_with(r.log, {"ncclAllReduce", " count=1 type=8 "}) == 2 * 2);
  }
}

TEST_CASE("perf --backend nccl: TWINCCL_RANKS_PER_GPU runs several ranks per GPU as threads",
          "[cli]") {
  // NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1: 2 GPUs x 2 ranks, one process started alone.
  // The double's allocate_before_collectives rule: every buffer of the sweep (rows, warmup, -a's
  // and -c's one-value all_reduces) is allocated before each rank's first collective.
  const std::string multi = "TWINCCL_DOUBLE_NCCL_VERSION=23007 TWINCCL_RANKS_PER_GPU=2 ";
  const LoggedRun r = run_on_double(
      "-b 1K -e 64K -f 4 -n 2 -a 1 all_reduce all_gather reduce_scatter broadcast reduce "
      "all_to_all gather scatter sendrecv hypercube",
      "nccl_per_gpu",
      multi + "NCCL_MULTI_RANK_GPU_ENABLE=1 TWINCCL_DOUBLE_ALLOCATE_BEFORE_COLLECTIVES=1");
  INFO(r.result.out << r.log.substr(0, 2000));
  REQUIRE(r.result.exit_code == 0);
  CHECK(r.result.out.find("Rank  3 Group") != std::string::npos);
  CHECK(r.result.out.find("Rank  4 Group") == std::string::npos);
  CHECK(r.result.out.find("# Out of bounds values : 0 OK") != std::string::npos);
  CHECK(r.result.out.find("hypercube") != std::string::npos);
  CHECK(lines_with(r.log, {"VIOLATION"}) == 0);
  // Refused, naming what is missing: the opt-in, or a new enough NCCL.
  const LoggedRun off = run_on_double("-b 1K -e 1K all_reduce", "nccl_per_gpu_off", multi);
  CHECK(off.result.exit_code != 0);
  CHECK(off.result.out.find("NCCL_MULTI_RANK_GPU_ENABLE=1") != std::string::npos);
  const LoggedRun old = run_on_double("-b 1K -e 1K all_reduce", "nccl_per_gpu_old",
                                      "TWINCCL_RANKS_PER_GPU=2 NCCL_MULTI_RANK_GPU_ENABLE=1");
  CHECK(old.result.exit_code != 0);
  CHECK(old.result.out.find("need NCCL >= 2.30") != std::string::npos);
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
