// Output files of `twinccl` (--trace, timelines) written with every step checked: opening, the
// writes, flush and close. A failure names the flag, the path and the system's reason
// ("--trace '/dev/full': cannot write: No space left on device"), never exit 0 with a lost file.
//
//   write_output_file("--trace", path, [&](std::ostream& f) { sim::write_trace_json(report, f); });
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace twinccl::cli {

// Throws ConfigError when the file cannot be created (missing folder, a directory, no permission)
// and twinccl::Error when writing it fails (disk full).
void write_output_file(std::string_view flag, const std::string& path,
                       const std::function<void(std::ostream&)>& write);

// Flushes standard output; throws twinccl::Error with the system's reason when that fails.
void flush_standard_output(std::ostream& out);

}  // namespace twinccl::cli
