// Output files of `twinccl` (--trace, -J, --plot, timelines): core's checked writes
// (twinccl/output_file.h), and standard output checked at the end.
//
//   check_output_path("--trace", path);   // before minutes of simulation
//   write_output_file("--trace", path, [&](std::ostream& f) { sim::write_trace_json(report, f); });
#pragma once

#include <iosfwd>

#include "twinccl/output_file.h"

namespace twinccl::cli {

// Flushes standard output; throws twinccl::Error with the system's reason when that fails.
void flush_standard_output(std::ostream& out);

}  // namespace twinccl::cli
