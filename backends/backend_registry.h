// The backends twinccl::run() can pick by name (TWINCCL_BACKEND): the one place the choice is made.
//
//   // backends/nccl/register.cc (library twinccl_nccl, CMake target TwinCCL::nccl):
//   extern "C" const bool twinccl_nccl_backend = twinccl::backends::add({"nccl",
//   &nccl::run_world});
//
// The emulator is always there (it is the default and lives in the same library as run()). Any
// other backend is its own library that adds itself when a program links it, so a program that
// only uses the emulator links no NCCL code at all. A static library's member that nobody
// references is not linked, and with it its initializer would not run: so such a library names
// its registration symbol in its link options (`-Wl,--undefined=twinccl_nccl_backend`, carried by
// the CMake target and the pkg-config file), which makes the linker take that member in.
#pragma once

#include <string>
#include <string_view>

#include "twinccl/run.h"

namespace twinccl::backends {

using RunWorld = void (*)(const RunOptions& options, const RankFunction& fn);

struct Backend {
  std::string_view name;  // the value of TWINCCL_BACKEND / RunOptions::backend
  RunWorld run_world = nullptr;
};

// Adds a backend (at static initialization; thread-safe). Returns true so that it can initialize
// a constant. A name added twice keeps its first entry.
bool add(const Backend& backend);

// The backend called `name`, or nullptr when none was linked under that name.
const Backend* find(std::string_view name);

// The names linked into this program, "emu" first ("emu, nccl").
std::string linked_names();

}  // namespace twinccl::backends
