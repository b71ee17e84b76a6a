// What nccl-tests' flags do in `twinccl perf`: the -f/-i rule, -t x -g as the world size (GPUs of
// the topology in simulation), -N, -c N, -o mulsum, nccl-tests' type names, and --compare with
// --algo.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

std::vector<std::vector<std::string>> rows_of(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> f;
    for (std::string w; words >> w;) f.push_back(w);
    if (f.size() >= 13 && line[0] == ' ' && std::isdigit(static_cast<unsigned char>(f[0][0])))
      rows.push_back(f);
  }
  return rows;
}

}  // namespace

TEST_CASE("perf -f and -i follow nccl-tests: a factor > 1 multiplies, -f 1 adds -i",
          "[cli][nccl-tests]") {
  auto both = run_cli("perf all_reduce -b 1K -e 8K -f 2 -i 1K -c 0");
  REQUIRE(both.exit_code == 0);
  CHECK_THAT(both.out, Contains("step: 2(factor)") &&
                           Contains("-i 1K (-f 2 > 1 multiplies, as in nccl-tests)"));
  CHECK(rows_of(both.out).size() == 4);  // 1K 2K 4K 8K
  auto add = run_cli("perf all_reduce -b 1K -e 4K -f 1 -i 1K -c 0");
  REQUIRE(add.exit_code == 0);
  CHECK_THAT(add.out, Contains("step: 1024(bytes)"));
  CHECK(rows_of(add.out).size() == 4);  // 1K 2K 3K 4K
  auto only_i = run_cli("perf all_reduce -b 1K -e 4K -i 1K -c 0");
  REQUIRE(only_i.exit_code == 0);
  CHECK(rows_of(only_i.out).size() == 4);
  auto frac = run_cli("perf all_reduce -b 1.5M -e 1.5M -c 0");
  REQUIRE(frac.exit_code == 0);
  CHECK(rows_of(frac.out).at(0).at(0) == "1572864");
}

TEST_CASE("perf -g picks GPUs of the topology in simulation, -t x -g ranks on the emulator",
          "[cli][nccl-tests]") {
  auto sim = run_cli("perf all_gather -g 4 -b 1M -e 1M -c 0");
  REQUIRE(sim.exit_code == 0);
  CHECK_THAT(sim.out, Contains("dgx-h100 (4 of its 8 GPUs)") && Contains("nThread 1 nGpus 4"));
  auto r = rows_of(sim.out);
  REQUIRE(r.size() == 1);
  CHECK(r[0][1] == "65536");  // per-rank count: 1M / 4 ranks / 4 bytes
  auto ranks = run_cli("perf all_gather --ranks 4 -b 1M -e 1M -c 0");
  const auto by_ranks = rows_of(ranks.out);
  REQUIRE(by_ranks.size() == 1);
  for (std::size_t c = 0; c < 5; ++c)
    CHECK(by_ranks[0][c] == r[0][c]);  // size count type redop root
  // -g 4: one thread launches the 4 GPUs (nccl-tests' host side, >= 4 x 3.2 us on DGX H100's host)
  // and one launch follows the kernels; --ranks 4: the kernels alone.
  CHECK(std::stod(r[0][5]) >= 4 * 3.2);
  CHECK(std::stod(by_ranks[0][5]) < std::stod(r[0][5]));
  auto emu = run_cli("perf all_reduce --backend emu -t 2 -g 2 -b 1K -e 1K -n 1 -w 0");
  REQUIRE(emu.exit_code == 0);
  CHECK_THAT(emu.out,
             Contains("4 emulated ranks") && Contains("nThread 2 nGpus 2") && Contains("0 OK"));
  CHECK(twinccl_test::run_cli("perf all_reduce -g 16 -c 0").exit_code == 2);
}

TEST_CASE("perf -N repeats the sweep, -c N checks, -o mulsum and nccl-tests' type names",
          "[cli][nccl-tests]") {
  auto cycles = run_cli("perf all_reduce -b 1K -e 2K -N 3 -c 0");
  REQUIRE(cycles.exit_code == 0);
  CHECK(rows_of(cycles.out).size() == 6);
  auto checked = run_cli("perf reduce_scatter -b 64K -e 64K -c 3 -o mulsum -d bfloat16");
  REQUIRE(checked.exit_code == 0);
  auto r = rows_of(checked.out);
  REQUIRE(r.size() == 1);
  CHECK(r[0][2] == "bfloat16");
  CHECK(r[0][3] == "mulsum");
  CHECK(r[0][8] == "0");
  CHECK_THAT(checked.out, Contains("validation: 3"));
  auto types = run_cli("perf all_reduce -b 64 -e 64 -c 0 -d all");
  REQUIRE(types.exit_code == 0);
  std::string names;
  for (const auto& row : rows_of(types.out)) names += row[2] + " ";
  CHECK(names == "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double f8e4m3 f8e5m2 ");
}

TEST_CASE("perf --compare honours --algo and --proto", "[cli][nccl-tests]") {
  auto all = run_cli("perf all_reduce -b 1M -e 1M -c 0 --compare");
  auto ring = run_cli("perf all_reduce -b 1M -e 1M -c 0 --compare --algo ring");
  REQUIRE(all.exit_code == 0);
  REQUIRE(ring.exit_code == 0);
  CHECK_THAT(all.out, Contains("nvls/Simple"));
  CHECK_THAT(ring.out, Contains("ring/LL128") && !Contains("nvls/Simple") && !Contains("tree/"));
  auto proto = run_cli("perf all_reduce -b 1M -e 1M -c 0 --compare --algo ring --proto Simple");
  CHECK_THAT(proto.out, Contains("ring/Simple") && !Contains("ring/LL128"));
}

TEST_CASE("perf -g/-t feed nccl-tests' host side: one thread launching -g GPUs bounds a small call",
          "[cli][nccl-tests]") {
  // 8 bytes on the default DGX H100: -g 8 is one thread launching 8 GPUs (at least 8 x 3.2 us,
  // its host's figure, sim/src/host_launch.h, presets/dgx_node.h); -t 8 -g 1 one GPU per thread
  // (kernels + one 5 us launch); --ranks 8 the kernels alone (NCCL's model).
  auto time_of = [](const std::string& args) {
    auto r = run_cli("perf " + args + " -b 8 -e 8 -c 0");
    REQUIRE(r.exit_code == 0);
    const auto rows = rows_of(r.out);
    REQUIRE(rows.size() == 1);
    return std::stod(rows[0][5]);
  };
  for (const char* test : {"all_reduce", "sendrecv"}) {
    CAPTURE(test);
    const double kernels = time_of(std::string(test) + " --ranks 8");
    const double per_thread = time_of(std::string(test) + " -t 8 -g 1");
    const double one_thread = time_of(std::string(test) + " -g 8");
    CHECK(per_thread == Approx(kernels + 5.0).margin(0.02));
    CHECK(one_thread >= 8 * 3.2 - 0.05);
    CHECK(one_thread > per_thread);
  }
}
