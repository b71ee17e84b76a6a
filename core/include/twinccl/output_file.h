// Output files: checked before the work starts, then written with every step checked. A failure
// names what asked for the file (a flag, a variable), the path and the system's reason
// ("--trace '/dev/full': cannot write the file: No space left on device"), never a lost file
// reported as written, and never a half-written file: a regular file is written to a temporary
// file in the same folder and renamed over the path only once complete. Used by `twinccl`'s flags
// and by the emulator backend's TWINCCL_TRACE and TWINCCL_TIMELINE.
//
//   check_output_path("--trace", path);   // before minutes of simulation
//   ...
//   write_output_file("--trace", path, [&](std::ostream& f) { sim::write_trace_json(report, f); });
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/call_site_text.h"  // shown_value: how a message shows the path

namespace twinccl {

// Throws ConfigError naming `what` and the path when a file cannot be written there: a missing
// folder, a folder given as the file, a folder that is not one, no permission (a probe file is
// created and removed in the folder). Existing devices (/dev/null, /dev/stdout) are accepted.
void check_output_path(std::string_view what, const std::string& path);

// Throws ConfigError when the file cannot be created (missing folder, a directory, no permission)
// and twinccl::Error when writing it fails (disk full); nothing is left at `path` then.
void write_output_file(std::string_view what, const std::string& path,
                       const std::function<void(std::ostream&)>& write);

// The same for a file another program writes (gnuplot): `write(file)` must create `file` (a
// temporary name beside `path`, or `path` itself for a device); an empty or missing file is an
// error. The file is renamed over `path` only when `write` returns.
void write_output_file_by(std::string_view what, const std::string& path,
                          const std::function<void(const std::string& file)>& write);

// The files of a command that writes one file per part (per collective, per topology) for one
// path the user gave: `path` itself for one part, and for a device or pipe (/dev/null,
// /dev/full: written in place, never a new file beside it); else `path` with ".<part>" before its
// extension, the part as a file-name token (letters, digits, '.', '-', '_', '=', '@' kept, any
// other byte '_', at most 80 bytes; a part that is a file path gives its stem), numbered ".2",
// ".3" when two parts give the same name, so that no file overwrites another.
//
//   part_output_paths("t.json", {"dgx-h100", "dgx-h100"})  // {"t.dgx-h100.json",
//   "t.dgx-h100.2.json"}
std::vector<std::string> part_output_paths(const std::string& path,
                                           const std::vector<std::string>& parts);

}  // namespace twinccl
