// `twinccl perf sendrecv | hypercube`: nccl-tests' sendrecv_perf and hypercube_perf on the
// emulator (checked bit for bit) and the simulator, with nccl-tests' counts and bus-bandwidth
// factors (src/sendrecv.cu, src/hypercube.cu); and -J's file naming (src/util.cu jsonOutputInit).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"
#include "twinccl/sim/nccl_tests_log.h"

using Catch::Matchers::Contains;
using twinccl_test::fields;
using twinccl_test::run_cli;

namespace {

// The data rows of a table (lines that start with a size), split in fields.
std::vector<std::vector<std::string>> rows_of(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto f = fields(line);
    if (!f.empty() && line[0] != '#' && std::isdigit(static_cast<unsigned char>(f[0][0])))
      rows.push_back(f);
  }
  return rows;
}

}  // namespace

TEST_CASE("perf sendrecv on the emulator: ring of send/recv, checked, busbw = algbw",
          "[cli][nccl-tests][p2p]") {
  auto r = run_cli("perf sendrecv --backend emu --ranks 3 -b 8 -e 4K -f 8 -n 2 -w 1 -d int32");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("# Collective test starting: sendrecv_perf") &&
                        Contains("# Collective test concluded: sendrecv_perf") &&
                        Contains("# Out of bounds values : 0 OK"));
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 4);  // 8, 64, 512, 4096 bytes
  for (const auto& f : rows) {
    CAPTURE(f);
    REQUIRE(f.size() >= 13);
    CHECK(std::stoul(f[1]) * 4 == std::stoul(f[0]));  // count = size / type size
    CHECK(f[2] == "int32");
    CHECK(f[3] == "sum");  // nccl-tests prints the -o op for sendrecv
    CHECK(f[4] == "-1");
    CHECK(f[7] == f[6]);    // busbw = algbw
    CHECK(f[8] == "0");     // out of place: checked
    CHECK(f[12] == "N/A");  // in place: nccl-tests does not check it
  }
}

TEST_CASE("perf hypercube on the emulator: log2(n) exchanges, count aligned to 4, checked",
          "[cli][nccl-tests][p2p]") {
  auto r = run_cli("perf hypercube --backend emu --ranks 4 -b 1K -e 1K -n 1 -w 0");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("# Collective test starting: hypercube_perf"));
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 1);
  // The redop column is blank as nccl-tests prints it: one field fewer.
  const auto& f = rows[0];
  REQUIRE(f.size() >= 12);
  CHECK(f[0] == "1024");  // 4 ranks x 64 floats x 4 bytes
  CHECK(f[1] == "64");    // 1024 / 4 bytes / 4 ranks, rounded down to 4 elements
  CHECK(f[2] == "float");
  CHECK(f[3] == "-1");
  CHECK(f[6] == f[5]);  // busbw = algbw
  CHECK(f[7] == "0");
  CHECK(f[11] == "0");  // in place checked too
  // 1000 bytes: 250 floats / 4 ranks = 62, aligned down to 60.
  auto odd = run_cli("perf hypercube --backend emu --ranks 4 -b 1000 -e 1000 -n 1 -w 0");
  REQUIRE(odd.exit_code == 0);
  CHECK(rows_of(odd.out)[0][1] == "60");
  CHECK(rows_of(odd.out)[0][0] == "960");
  auto three = run_cli("perf hypercube --backend emu --ranks 3 -b 1K -e 1K");
  CHECK(three.exit_code != 0);
  CHECK_THAT(three.out, Contains("3 ranks is not a power of 2"));
}

TEST_CASE("perf sendrecv/hypercube predicted: NVLink inside a DGX H100, the NIC across nodes",
          "[cli][nccl-tests][p2p]") {
  // One node: each GPU sends over its own NVLinks to the NVSwitch: about the 370.8 GB/s line.
  for (const char* test : {"sendrecv", "hypercube"}) {
    CAPTURE(test);
    for (const char* fidelity : {"analytic", "flow"}) {
      CAPTURE(fidelity);
      auto r = run_cli(std::string("perf ") + test + " -b 1G -e 1G -c 0 --fidelity " + fidelity);
      REQUIRE(r.exit_code == 0);
      const auto rows = rows_of(r.out);
      REQUIRE(rows.size() == 1);
      const auto& f = rows[0];
      const std::size_t busbw = std::string(test) == "sendrecv" ? 7 : 6;
      CAPTURE(f);
      CHECK(std::stod(f[busbw]) > 300);
      CHECK(std::stod(f[busbw]) <= 371);
      CHECK(f.back() == "p2p/Simple");
    }
  }
  // Two nodes: ranks 7 -> 8 and 15 -> 0 cross the network, so a 400 Gb/s NIC (50 GB/s, NCCL's
  // share of it) bounds the ring.
  auto cluster = run_cli("perf sendrecv -b 1G -e 1G -c 0 --topology h100-cluster-2");
  REQUIRE(cluster.exit_code == 0);
  const double busbw = std::stod(rows_of(cluster.out)[0][7]);
  CHECK(busbw > 40);
  CHECK(busbw <= 50);
  // The header says what a send inside a node runs on: across nodes the network peers' 2
  // channels of H100's 30 GB/s (sim/src/p2p_channels.h); in one node its own 32.
  CHECK_THAT(cluster.out, Contains("16 p2p channels, at most 2 a send") &&
                              Contains("at most 2 x 30 GB/s = 60 GB/s"));
  CHECK_THAT(run_cli("perf sendrecv -b 1G -e 1G -c 0").out,
             Contains("32 p2p channels, at most 32 a send"));
  auto algo = run_cli("perf sendrecv --algo ring -b 1K -e 1K");
  CHECK(algo.exit_code != 0);
  CHECK_THAT(algo.out, Contains("sendrecv is grouped send/recv"));
}

TEST_CASE("perf sendrecv/hypercube output parses as nccl-tests' own (table and -J)",
          "[cli][nccl-tests][p2p]") {
  const std::string path = "p2p_compat_" + std::to_string(::getpid()) + ".json";
  auto r = run_cli("perf sendrecv -b 1K -e 64K -f 4 -g 8 -c 0 --plain -J " + path);
  REQUIRE(r.exit_code == 0);
  const auto tables = twinccl::sim::parse_nccl_tests_output(r.out, "sendrecv.log");
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].collective == "sendrecv");
  CHECK(tables[0].rows.size() == 4);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  const auto json = twinccl::sim::parse_nccl_tests_json(text.str(), path);
  REQUIRE(json.size() == 1);
  CHECK(json[0].collective == "sendrecv");
  REQUIRE(json[0].rows.size() == tables[0].rows.size());
  CHECK(json[0].rows[3].out_of_place->busbw_gbps ==
        Approx(tables[0].rows[3].out_of_place->busbw_gbps).margin(0.01));
  // hypercube prints its redop column blank, as nccl-tests does: the same parser reads it.
  auto cube = run_cli("perf hypercube -b 1K -e 64K -f 4 -g 8 -c 0 --plain");
  REQUIRE(cube.exit_code == 0);
  const auto cube_tables = twinccl::sim::parse_nccl_tests_output(cube.out, "hypercube.log");
  REQUIRE(cube_tables.size() == 1);
  CHECK(cube_tables[0].collective == "hypercube");
  REQUIRE(cube_tables[0].rows.size() == 4);
  CHECK(cube_tables[0].rows[0].redop_blank);
}

TEST_CASE("perf -J names files as nccl-tests: never overwrites, FILE.0, FILE.1 ..., only .json",
          "[cli][nccl-tests]") {
  const std::string dir = "json_naming_" + std::to_string(::getpid());
  std::filesystem::create_directory(dir);
  const std::string path = dir + "/out.json";
  // A default sweep runs three programs: FILE, FILE.0, FILE.1, as three nccl-tests runs would.
  auto first = run_cli("perf -b 1K -e 1K -c 0 -J " + path);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.out, Contains("# Writing JSON output to " + path + "\n") &&
                            Contains("# Writing JSON output to " + path + ".0\n") &&
                            Contains("# Writing JSON output to " + path + ".1\n"));
  // Run again: the existing files are kept, the next free name is taken.
  auto second = run_cli("perf all_reduce -b 1K -e 1K -c 0 -J " + path);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.out, Contains("# Writing JSON output to " + path + ".2\n"));
  CHECK(std::filesystem::exists(path + ".2"));
  // nccl-tests writes nothing for a name that does not end in .json.
  auto plain = run_cli("perf all_reduce -b 1K -e 1K -c 0 -J " + dir + "/out.txt");
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/out.txt"));
  CHECK_THAT(plain.out, Contains("not a .json name"));
  std::filesystem::remove_all(dir);
}
