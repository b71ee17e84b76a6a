// `twinccl perf --compare` and perf's algorithm column give one answer: the row marked `*` is the
// algorithm/protocol the table reports for that size, and where one of NCCL's algorithms runs
// faster than NCCL's choice a note gives both of NCCL's ranking times and the NCCL_ALGO to force.
#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

using twinccl_test::fields;
using twinccl_test::run_cli;

namespace {

bool is_nccl_pair(const std::string& pair) {
  const std::string algo = pair.substr(0, pair.find('/'));
  return algo == "ring" || algo == "tree" || algo == "nvls" || algo == "nvls_tree" || algo == "pat";
}

}  // namespace

TEST_CASE("perf --compare marks the row perf reports, and says why a faster one is not NCCL's",
          "[cli][compare]") {
  int notes = 0;
  for (const char* topology : {"dgx-h100", "h100-cluster-2"}) {
    CAPTURE(topology);
    const auto r = run_cli(std::string("perf all_reduce --topology ") + topology +
                           " -b 64K -e 64M -c 0 --compare");
    REQUIRE(r.exit_code == 0);
    std::map<std::string, std::string> reported, marked;  // size -> algorithm/protocol
    std::istringstream in(r.out);
    bool compare = false;
    std::string expected_note;  // what the line after a size line must hold, "" = no note
    for (std::string line; std::getline(in, line);) {
      if (line.find("which algorithm wins") != std::string::npos) compare = true;
      const std::vector<std::string> w = fields(line);
      const bool size_line =
          !w.empty() && line[0] == ' ' && std::isdigit(static_cast<unsigned char>(w[0][0]));
      if (compare && !expected_note.empty()) {  // the note after a size line
        CAPTURE(line);
        CHECK(!size_line);
        CHECK(line.find(expected_note) != std::string::npos);
        CHECK(line.find("NCCL_ALGO=") != std::string::npos);
        ++notes;
        expected_note.clear();
        continue;
      }
      if (!size_line) continue;
      if (!compare) {
        reported[w[0]] = w.back();  // nccl-tests' row, then the algorithm/protocol column
        continue;
      }
      std::string first_nccl;
      for (std::size_t i = 2; i < w.size(); i += 2) {
        if (first_nccl.empty() && is_nccl_pair(w[i - 1])) first_nccl = w[i - 1];
        if (w[i].back() == '*') marked[w[0]] = w[i - 1];
      }
      if (first_nccl != marked[w[0]]) expected_note = "* " + marked[w[0]] + ": NCCL's model";
    }
    REQUIRE(reported.size() == 11);  // 64 KiB .. 64 MiB
    CHECK(marked == reported);
    CHECK(expected_note.empty());
  }
  // On 2 nodes at 4-16 MiB tree/LL128 runs faster than NVLS-tree, which NCCL ranks first without
  // its pipeline fill (docs/fidelity.md): notes are printed.
  CHECK(notes > 0);
}
