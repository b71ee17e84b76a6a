// `twinccl topo show NAME [--set ...] --format json [-o FILE]`: the topology, edits applied, as the
// file --topology reads. Saved and read back, perf and compare predict as the preset with its
// edits, `topo show` prints the same description and `topo check` passes; the JSON alone is on
// standard output (notes on standard error); wrong --format / -o uses are refused with the way to
// write it.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "twinccl/topologies/topology_file.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The output without the lines that name the topology as given (the perf header, what-if notes).
std::string without_names(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0 || line.rfind("what-if:", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

const std::string kEdits = " --set nic_gbps=25 --set group_launch_us=4.1 --fail nic3@node1";

}  // namespace

TEST_CASE("topo show --format json saves a preset and its edits as the file --topology reads",
          "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-topo-json");
  const std::string json = scratch.path("p5.json"), err = scratch.path("err.txt");
  // Standard output carries the JSON alone; the what-if notes go to standard error.
  run_cli("topo show aws-p5-2" + kEdits + " --format json 2>" + err + " | cat > " + json);
  CHECK_THAT(file_text(err), Contains("what-if:") && Contains("nic3"));
  const std::string text = file_text(json);
  REQUIRE(text.rfind("{\n", 0) == 0);
  const twinccl::topo::Topology saved = twinccl::topo::topology_from_json(text, json);
  CHECK(saved.facts().group_launch_us == 4.1);
  CHECK(saved.facts().network == twinccl::topo::NetworkClass::efa);

  const auto check = run_cli("topo check " + json);
  CHECK(check.exit_code == 0);
  const auto shown = run_cli("topo show " + json);
  const auto preset_shown = run_cli("topo show aws-p5-2" + kEdits);
  REQUIRE(shown.exit_code == 0);
  CHECK(without_names(shown.out) == without_names(preset_shown.out));

  const std::string sweep = "perf all_reduce all_gather -b 8 -e 256M -f 32 -g 8 -c 0 --topology ";
  const auto from_file = run_cli(sweep + json);
  const auto from_preset = run_cli(sweep + "aws-p5-2" + kEdits);
  REQUIRE(from_file.exit_code == 0);
  CHECK(without_names(from_file.out) == without_names(from_preset.out));
  CHECK_THAT(from_file.out, Contains("268435456"));

  // -o writes the same text and says how to use it.
  const std::string out_path = scratch.path("again.json");
  const auto written = run_cli("topo show aws-p5-2" + kEdits + " --format json -o " + out_path);
  CHECK(written.exit_code == 0);
  CHECK_THAT(written.out, Contains("--topology " + out_path));
  CHECK(file_text(out_path) == text);
}

TEST_CASE("compare reads a saved preset as it reads the preset", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-topo-json-compare");
  const std::string json = scratch.path("a100.json");
  REQUIRE(run_cli("topo show dgx-a100 --format json -o " + json).exit_code == 0);
  const std::string log = std::string(TWINCCL_SOURCE_DIR) +
                          "/tests/fidelity/logs/a100-sxm4-80gb-1node-all_reduce-g8.log";
  const auto from_file = run_cli("compare " + log + " --topology " + json + " --format csv");
  const auto from_preset = run_cli("compare " + log + " --topology dgx-a100 --format csv");
  REQUIRE(from_file.exit_code == 0);
  CHECK(without_names(from_file.out) == without_names(from_preset.out));
}

TEST_CASE("topo --format and -o: wrong values and uses are refused with the way to write it",
          "[cli]") {
  const auto bad = run_cli("topo show dgx-h100 --format yaml");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Contains("'yaml'") && Contains("text") && Contains("--format json -o"));
  const auto no_json = run_cli("topo show dgx-h100 -o x.json");
  CHECK(no_json.exit_code == 2);
  CHECK_THAT(no_json.out, Contains("add --format json"));
  const auto list = run_cli("topo list --format json");
  CHECK(list.exit_code == 2);
  CHECK_THAT(list.out, Contains("only `topo show`"));
  // A GPU's compute speed (--degrade of a GPU) has no place in the file: refused, not lost.
  const auto slow_gpu = run_cli("topo show dgx-h100 --degrade gpu3@node0=50% --format json");
  CHECK(slow_gpu.exit_code == 2);
  CHECK_THAT(slow_gpu.out, Contains("GPU rank 3 (50%)") && Contains("replay"));
  // --format text is the default text.
  CHECK(run_cli("topo show dgx-h100 --format text").out == run_cli("topo show dgx-h100").out);
}

TEST_CASE("topo show -o refuses the file it reads, however the path is written", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-topo-json-self");
  const std::string json = scratch.path("mine.json");
  REQUIRE(run_cli("topo show dgx-h100 --format json -o " + json).exit_code == 0);
  const std::string before = file_text(json);
  const std::string dir = json.substr(0, json.rfind('/'));
  for (const std::string& out : {json, dir + "/./mine.json", dir + "//mine.json"}) {
    const auto r = run_cli("topo show " + json + " --set nic_gbps=25 --format json -o " + out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Contains("the topology being read") && Contains("another file"));
  }
  CHECK(file_text(json) == before);
}

TEST_CASE("topo show -o takes only a name --topology reads: ending in .json", "[cli]") {
  // Before: each was written, and the advice "use it as --topology FILE" could not load it.
  const twinccl_test::ScratchDir scratch("twinccl-topo-json-name");
  for (const std::string name : {"x.xml", "noext", "x.JSON", "-"}) {
    const std::string out = name == "-" ? name : scratch.path(name);
    const auto r = run_cli("topo show dgx-h100 --format json -o " + out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Contains("ending in .json") && Contains("leave -o out"));
    CHECK_FALSE(std::ifstream(out).good());
  }
  CHECK(run_cli("topo show dgx-h100 --format json -o " + scratch.path("ok.json")).exit_code == 0);
}

TEST_CASE("topo show -o shows the topology's name printable", "[cli]") {
  // Before: a U+202E (right-to-left override) in a JSON's name reached the terminal as is.
  const twinccl_test::ScratchDir scratch("twinccl-topo-json-shown");
  const std::string json = scratch.path("a.json"), renamed = scratch.path("b.json");
  REQUIRE(run_cli("topo show dgx-h100 --format json -o " + json).exit_code == 0);
  std::string text = file_text(json);
  const std::string name = "\"name\": \"dgx-h100\"";
  REQUIRE(text.find(name) != std::string::npos);
  text.replace(text.find(name), name.size(), "\"name\": \"evil\u202etxt.exe\"");
  std::ofstream(renamed) << text;
  const auto r = run_cli("topo show " + renamed + " --format json -o " + scratch.path("c.json"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("(evil\\xe2\\x80\\xaetxt.exe)"));
  CHECK(r.out.find("\u202e") == std::string::npos);
  CHECK(r.out.find("\xe2\x80\xae") == std::string::npos);
}
