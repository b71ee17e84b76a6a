// Adds the NCCL backend to run()'s table (backend_registry.h) when a program links twinccl_nccl.
// The symbol is extern "C" so that the library's link option -Wl,--undefined=twinccl_nccl_backend
// names it without C++ mangling; that option is what makes the linker take this file in.
#include "backend_registry.h"
#include "nccl/launch.h"

extern "C" {
extern const bool twinccl_nccl_backend;
const bool twinccl_nccl_backend = twinccl::backends::add({"nccl", &twinccl::nccl::run_world});
}
