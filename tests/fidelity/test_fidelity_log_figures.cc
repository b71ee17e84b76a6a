// The figures transcribed by hand into tests/fidelity/figures/*.csv from a log that is also kept
// in tests/fidelity/logs are the log's own numbers, as the reader reads them: the two agree row
// for row (a transcription slip, or a reader that misreads the log, fails here).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <sstream>

#include "figures_csv.h"
#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl;
using namespace twinccl::fidelity;

namespace {

struct LogOfFigures {
  const char* source_prefix;  // the CSV rows' source column starts so
  const char* log;            // under tests/fidelity/logs
};

// KeitaW/p5-nccl-test-2024-07-19's NCCL 2.22.3 log is Open MPI --tag-output stdout: the tag stands
// in the middle of every row (nccl_tests_log_launcher.cc).
constexpr LogOfFigures kLogsOfFigures[] = {
    {"KeitaW/p5-nccl-test-2024-07-19@1c78584 p5 NCCL 2.22.3",
     "aws-p5-2node-all_reduce-nccl2.22.3-ompi-tagged-8B-16G.log"},
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("figures transcribed from a kept log equal the log's rows as the reader reads them") {
  const FiguresRead figures = read_figures_dir(
      std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/figures", "tests/fidelity/figures");
  for (const LogOfFigures& l : kLogsOfFigures) {
    INFO(l.log);
    const std::vector<sim::NcclTestsTable> tables = sim::parse_nccl_tests_file_text(
        read(std::string(TWINCCL_FIDELITY_LOGS) + "/" + l.log), l.log);
    REQUIRE(tables.size() == 1);
    const sim::NcclTestsTable& t = tables.front();
    int compared = 0;
    for (const FigureRow& f : figures.rows) {
      if (f.source.rfind(l.source_prefix, 0) != 0) continue;
      INFO(f.where);
      CHECK(f.collective == t.collective);
      CHECK(f.nccl_version == t.nccl_version.substr(0, t.nccl_version.find('+')));
      const auto row = std::find_if(t.rows.begin(), t.rows.end(), [&](const sim::NcclTestsRow& r) {
        return r.size_bytes == f.bytes;
      });
      REQUIRE(row != t.rows.end());
      const std::optional<sim::NcclTestsBlock>& block =
          f.in_place ? row->in_place : row->out_of_place;
      REQUIRE(block.has_value());
      CHECK(block->time_us == f.measured_us);  // the same printed number, not a near one
      ++compared;
    }
    CHECK(compared == 8);
  }
}
