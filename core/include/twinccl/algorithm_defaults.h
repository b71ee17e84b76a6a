// Questions about the registry's names that callers ask without comparing names themselves (the
// registry owns every comparison of algorithm names; sim/selection.h owns the choice).
//
//   if (is_default_algorithm(OpKind::all_reduce, "ring")) ...   // the emulator's fast path
//   if (serves_algorithm(OpKind::all_gather, forced)) ...        // a forced name applies here
#pragma once

#include <string_view>

#include "twinccl/operation.h"

namespace twinccl {

// Whether `algorithm` is default_algorithm(kind) (algorithms.h), whose results the emulator's fast
// path gives; allocates nothing (the emulator asks on every small call).
bool is_default_algorithm(OpKind kind, std::string_view algorithm);
// Whether a registered algorithm named `algorithm` serves `kind`.
bool serves_algorithm(OpKind kind, std::string_view algorithm);

}  // namespace twinccl
