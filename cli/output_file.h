// Output files of `twinccl` (--trace, -J, --plot, timelines): checked before the work starts, then
// written with every step checked. A failure names the flag, the path and the system's reason
// ("--trace '/dev/full': cannot write the file: No space left on device"), never exit 0 with a
// lost file, and never a half-written file: a regular file is written to a temporary file in the
// same folder and renamed over the path only once complete.
//
//   check_output_path("--trace", path);   // before minutes of simulation
//   ...
//   write_output_file("--trace", path, [&](std::ostream& f) { sim::write_trace_json(report, f); });
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace twinccl::cli {

// Throws ConfigError naming the flag and the path when a file cannot be written there: a missing
// folder, a folder given as the file, a folder that is not one, no permission (a probe file is
// created and removed in the folder). Existing devices (/dev/null, /dev/stdout) are accepted.
void check_output_path(std::string_view flag, const std::string& path);

// Throws ConfigError when the file cannot be created (missing folder, a directory, no permission)
// and twinccl::Error when writing it fails (disk full); nothing is left at `path` then.
void write_output_file(std::string_view flag, const std::string& path,
                       const std::function<void(std::ostream&)>& write);

// The same for a file another program writes (gnuplot): `write(file)` must create `file` (a
// temporary name beside `path`, or `path` itself for a device); an empty or missing file is an
// error. The file is renamed over `path` only when `write` returns.
void write_output_file_by(std::string_view flag, const std::string& path,
                          const std::function<void(const std::string& file)>& write);

// Flushes standard output; throws twinccl::Error with the system's reason when that fails.
void flush_standard_output(std::ostream& out);

}  // namespace twinccl::cli
