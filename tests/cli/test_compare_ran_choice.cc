// `compare` and `calibrate` price each size as NCCL ran it where NCCL's own per-call lines say
// (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING; twinccl/sim/nccl_ran_choice.h), in the log or in
// rank 0's NCCL_DEBUG_FILE given with --nccl-debug, and say where that differs from the
// simulator's own choice. The log is NVIDIA/nccl-tests#309's 2-node H100 run (published, verbatim
// in tests/fidelity/logs); the per-call lines added to it are made up for the test (that run
// printed none): RING / SIMPLE from 64 MiB, where the simulator's own choice is NVLS-tree.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

const std::string kLog = std::string(TWINCCL_SOURCE_DIR) +
                         "/tests/fidelity/logs/issue309-h100-xe9680-2node-all_reduce-8B-16G.log";

std::string tuning_line(long long bytes) {
  return "bm-h100-01:29262:29262 [0] NCCL INFO AllReduce: " + std::to_string(bytes) +
         " Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}";
}

// The per-call lines NCCL 2.24+ would print for the log's sizes of 64 MiB and up.
std::string tuning_lines() {
  std::string s;
  for (long long b = 64ll << 20; b <= 16ll << 30; b *= 2) s += tuning_line(b) + "\n";
  return s;
}

std::string write(const twinccl_test::ScratchDir& d, const std::string& name,
                  const std::string& text) {
  const std::string path = (d.dir / name).string();
  std::ofstream(path) << text;
  return path;
}

// The published log with `lines` where the run prints them: after its device block, before the
// table (the warm-up's calls).
std::string published_with(const std::string& lines) {
  std::ifstream in(kLog);
  std::string out, line;
  bool put = false;
  while (std::getline(in, line)) {
    if (!put && line.find("size") != std::string::npos && line.find("count") != std::string::npos) {
      out += lines;
      put = true;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("compare prices each size as NCCL's per-call lines say it ran", "[cli][compare]") {
  const twinccl_test::ScratchDir d("twinccl-ran-choice");
  // Lines in the log, before its table (as the warm-up prints them), or in a debug file.
  const std::string in_log = write(d, "tuning.log", published_with(tuning_lines()));
  const std::string debug = write(d, "nccl.bm-h100-01.29262.log", tuning_lines());
  for (const std::string& args :
       {in_log + " -t h100-cluster-2", kLog + " -t h100-cluster-2 --nccl-debug " + debug}) {
    const auto r = run_cli("compare " + args);
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("priced as NCCL ran each size (its NCCL_DEBUG_SUBSYS=TUNING "
                               "lines, from "));
    CHECK_THAT(r.out, Contains("): 9 of 32 rows; the simulator's own choice differs at 9: 64 MiB "
                               "- 16 GiB ran ring/Simple (the simulator's: nvls_tree/Simple)"));
    CHECK_THAT(r.out, Contains("  67108864  "));
    CHECK(r.out.find("ring/Simple") != std::string::npos);
  }
  // The rows' predicted pair is what the lines say; without them NCCL's choice as read.
  const auto plain = run_cli("compare " + kLog + " -t h100-cluster-2 --format csv");
  const auto ran = run_cli("compare " + in_log + " -t h100-cluster-2 --format csv");
  REQUIRE(plain.exit_code == 0);
  REQUIRE(ran.exit_code == 0);
  CHECK_THAT(plain.out, Contains("17179869184,4294967296,float32,sum,-1,68652"));
  CHECK(plain.out.find(",ring,Simple,") == std::string::npos);
  CHECK_THAT(ran.out, Contains(",ring,Simple,"));
}

TEST_CASE("compare's --algo / --proto force the pair over NCCL's per-call lines, saying so",
          "[cli][compare]") {
  const twinccl_test::ScratchDir d("twinccl-ran-forced");
  const std::string in_log = write(d, "tuning.log", published_with(tuning_lines()));
  const auto r = run_cli("compare " + in_log + " -t h100-cluster-2 --algo nvls_tree");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("say what ran at 9 of 32 rows; not used: --algo / --proto force the "
                             "pair"));
}

TEST_CASE("compare --nccl-debug refuses a file without per-call lines, or one of another run",
          "[cli][compare]") {
  const twinccl_test::ScratchDir d("twinccl-ran-refused");
  const std::string none = write(d, "none.log", "node:1:1 [0] NCCL INFO Connected all rings\n");
  auto r = run_cli("compare " + kLog + " -t h100-cluster-2 --nccl-debug " + none);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("none.log: no line of NCCL's per-call choices"));
  CHECK_THAT(r.out, Contains("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING"));
  const std::string other = write(d, "other.log", tuning_line(3) + "\n");
  r = run_cli("compare " + kLog + " -t h100-cluster-2 --nccl-debug " + other);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("other.log: its 1 distinct per-call choice(s) name no size of the "
                             "logs' rows (first: 3 bytes"));
}

TEST_CASE("calibrate prices the rows NCCL's per-call lines name as they ran", "[cli][calibrate]") {
  const twinccl_test::ScratchDir d("twinccl-ran-calibrate");
  const std::string debug = write(d, "nccl.log", tuning_lines());
  const std::string out = (d.dir / "fit.json").string();
  const std::string one = std::string(TWINCCL_SOURCE_DIR) +
                          "/tests/fidelity/logs/issue290-h100-1node-all_reduce-nvls.log";
  const auto r =
      run_cli("calibrate " + one + " " + kLog + " -t h100-cluster-2 --bandwidth-only -o " + out +
              " --nccl-debug " + debug);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("issue309-h100-xe9680-2node-all_reduce-8B-16G.log: 9 of 32 rows "
                             "priced as NCCL ran them (its NCCL_DEBUG_SUBSYS=TUNING lines, from "));
}

TEST_CASE("compare says which NCCL algorithm rows priced far off look like, and how to check",
          "[cli][compare]") {
  // OCI's GB300 2-rack run (published, verbatim; NCCL 2.28.7, no per-call lines): every row is
  // off NCCL-tree's price by 18-88%, and 13 of 16 are within 10% of ring's.
  const std::string gb300 = std::string(TWINCCL_SOURCE_DIR) +
                            "/tests/fidelity/logs/oci-gb300-32tray-2rack-all_reduce-512K-16G.log";
  const auto r = run_cli("compare " + gb300 + " -t gb300-nvl72-cluster-2x64 --ranks 128 --nodes 2");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("16 of 16 rows are off by more than 10%, and 13 of them (1 MiB - 16 "
                             "GiB) are within 10% of the simulator's price for ring: NCCL may "
                             "have run ring there"));
  CHECK_THAT(r.out, Contains("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING"));
  // Where the model's choice fits, or the rows say what ran, no such note.
  const auto fits = run_cli("compare " + kLog + " -t h100-cluster-2");
  REQUIRE(fits.exit_code == 0);
  CHECK(fits.out.find("may have run") == std::string::npos);
  const auto forced = run_cli("compare " + gb300 +
                              " -t gb300-nvl72-cluster-2x64 --ranks 128 --nodes 2 --algo ring");
  REQUIRE(forced.exit_code == 0);
  CHECK(forced.out.find("may have run") == std::string::npos);
}

TEST_CASE("calibrate says when a log looks run with another algorithm than the one it is fitted as",
          "[cli][calibrate]") {
  // OCI's GB300 logs (published, verbatim): fitted as NCCL's choice, the 2-rack log's ring-shaped
  // rows pull nic_gbps from 100 to 30 GB/s; the note says what the fit takes up.
  const std::string dir = std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/";
  const twinccl_test::ScratchDir d("twinccl-ran-look-alike");
  const std::string logs = dir + "oci-gb300-16tray-1rack-all_reduce-512K-16G.log " + dir +
                           "oci-gb300-32tray-2rack-all_reduce-512K-16G.log";
  const std::string args = "calibrate " + logs +
                           " -t gb300-nvl72-cluster-2x64 --ranks 64,128 --nodes 1,2 -o " +
                           (d.dir / "fit.json").string();
  const auto r = run_cli(args);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("# note: " + dir +
                             "oci-gb300-32tray-2rack-all_reduce-512K-16G.log: 16 of 16 rows are "
                             "off by more than 10%"));
  CHECK_THAT(r.out, Contains("so its parameters would take up that difference"));
  const auto ring = run_cli(args + " --algo - --algo Ring");  // priced as ring: no note
  REQUIRE(ring.exit_code == 0);
  CHECK(ring.out.find("may have run") == std::string::npos);
}
