// The Python caller's file:line as the std::source_location every TwinCCL call takes, so that
// errors name the line of the user's Python code, as they name a C++ caller's line.
//
//   Where where = python_call_site("train.py", 42);
//   comm.all_reduce(x, x, ReduceOp::sum(), {}, where);  // "... rank 3 (train.py:42): ..."
#pragma once

#include <source_location>
#include <string>

namespace twinccl::python {

// A location naming `file`:`line` (function "<python>"), valid for the life of the process.
// Distinct sites are kept once each (at most kMaxPythonCallSites; beyond that the location of
// this C++ function is returned, so a message names twinccl's binding instead of failing).
std::source_location python_call_site(const std::string& file, unsigned line);

inline constexpr std::size_t kMaxPythonCallSites = 1u << 16;

// True when python_call_site() can set the location on this standard library (checked once at
// import by reading a made location back).
bool python_call_sites_supported();

}  // namespace twinccl::python
