// Where TwinCCL::simtime registers itself (simulated_time.h).
#include "simulated_time.h"

#include <atomic>

namespace twinccl::simulated_time {
namespace {

// Constant-initialized, so a registration during another file's static initialization finds it.
std::atomic<Make> registered{nullptr};

}  // namespace

bool add(Make make) {
  Make none = nullptr;
  registered.compare_exchange_strong(none, make);
  return true;
}

Make linked() { return registered.load(); }

}  // namespace twinccl::simulated_time
