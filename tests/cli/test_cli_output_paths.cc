// Output paths (--plot, --trace, -J) are checked before the work starts: a missing folder, a
// folder given as the file, a file given as the folder, a place where no file can be created end
// the command at once in exit 2 and one line naming the option and the path, not after minutes of
// sweep. A write that fails half way (a file size limit here) leaves no partial file and no
// temporary file behind; an existing file is replaced only by a complete one.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::CliResult;
using twinccl_test::run_cli;

namespace {

namespace fs = std::filesystem;

// A fresh empty folder, removed with everything in it at the end of the test.
struct Folder {
  std::string path;
  Folder() {
    std::string pattern = (fs::temp_directory_path() / "twinccl-outputs-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(path)) ++n;
    return n;
  }
};

const std::string kTrace =
    std::string(TWINCCL_SOURCE_DIR) + "/fuzz/corpus/trace_json/quickstart_4ranks.json";

// Exit 2 at once with one line naming every needle: nothing of the work was printed before.
void require_refused_first(const std::string& args, const std::vector<std::string>& needles) {
  INFO("twinccl " << args);
  const CliResult r = run_cli(args, "", 20);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  for (const std::string& n : needles) CHECK_THAT(r.out, Contains(n));
  CHECK(r.out.find('\n') == r.out.size() - 1);  // one line: no table printed before it
}

}  // namespace

TEST_CASE("output paths: a missing folder or a folder given as the file ends the command first",
          "[cli][outputs]") {
  Folder dir;
  const std::string missing = dir.path + "/some/missing/folder";
  // whatif used to run the whole sweep, print its table and only then fail in gnuplot.
  require_refused_first(
      "whatif -t dgx-h100 -t 'dgx-h100 --set nvlink_gbps=600' --plot " + missing + "/x.png",
      {"--plot '" + missing + "/x.png'", "does not exist"});
  fs::create_directory(dir.path + "/d.png");
  require_refused_first("whatif -t dgx-h100 --plot " + dir.path + "/d.png",
                        {"--plot '" + dir.path + "/d.png'", "Is a directory"});
  // perf -J: checked before the sweep (this sweep itself fails: no size fits; the old code said
  // that instead).
  require_refused_first("perf all_gather -b 1 -e 8 -c 0 -J " + missing + "/x.json",
                        {"-J '" + missing + "/x.json'", "does not exist"});
  // A file given as the folder.
  std::ofstream(dir.path + "/file") << "x";
  require_refused_first("perf all_reduce -b 1M -e 1M -c 0 --trace " + dir.path + "/file/t.json",
                        {"--trace '" + dir.path + "/file/t.json'", "Not a directory"});
  // replay printed its table for two topologies before failing on the timeline.
  require_refused_first(
      "replay " + kTrace + " -t dgx-h100 -t dgx-a100 --trace " + missing + "/t.json",
      {"--trace '" + missing + "/t.json'", "does not exist"});
  // A place where nothing can be created.
  require_refused_first("perf all_reduce -b 1M -e 1M -c 0 --trace /proc/twinccl-t.json",
                        {"--trace '/proc/twinccl-t.json'", "cannot create a file"});
  CHECK(dir.entries() == 2);  // d.png and file: no probe file left
}

TEST_CASE("output files: a write that fails half way leaves no partial or temporary file",
          "[cli][outputs]") {
  Folder dir;
  // A 1-block file size limit, its signal ignored: the write fails with EFBIG after 512 bytes
  // (the old code left those 512 bytes in the file).
  const std::string limited = "trap '' XFSZ; ulimit -f 1;";
  const std::string trace = dir.path + "/t.json";
  CliResult r = run_cli(
      "perf all_reduce -b 16M -e 16M --algo ring --proto Simple -c 0 --trace " + trace, limited);
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Contains("--trace '" + trace + "'") && Contains("File too large"));
  CHECK(dir.entries() == 0);
  r = run_cli("replay " + kTrace + " -t dgx-h100 --trace " + trace, limited);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Contains("File too large"));
  CHECK(dir.entries() == 0);
  // An existing file stays as it was when the new one cannot be written ...
  std::ofstream(trace) << "earlier run";
  r = run_cli("perf all_reduce -b 16M -e 16M --algo ring --proto Simple -c 0 --trace " + trace,
              limited);
  CHECK(r.exit_code == 1);
  std::stringstream kept;
  kept << std::ifstream(trace).rdbuf();
  CHECK(kept.str() == "earlier run");
  CHECK(dir.entries() == 1);
  // ... and is replaced by the complete new one when it can.
  r = run_cli("perf all_reduce -b 1M -e 1M --algo ring --proto Simple -c 0 --trace " + trace);
  CHECK(r.exit_code == 0);
  std::stringstream written;
  written << std::ifstream(trace).rdbuf();
  CHECK(written.str().front() == '{');
  CHECK(written.str().size() > 1000);
  CHECK(dir.entries() == 1);
  // Devices are written in place (no temporary file can be renamed over them).
  CHECK(run_cli("perf all_reduce -b 1M -e 1M -c 0 --trace /dev/null").exit_code == 0);
}
