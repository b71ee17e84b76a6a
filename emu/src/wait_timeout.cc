// emulator.h's set_wait_timeout: a rank's own wait timeout on one of its communicators
// (wait_timeouts.h), checked here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "communicator.h"
#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"

namespace twinccl {

void set_wait_timeout(Communicator& comm, double seconds, std::string source) {
  auto* emu = dynamic_cast<emu::EmuCommunicator*>(&comm);
  if (emu == nullptr) {
    throw InvalidArgument("set_wait_timeout: comm '" + comm.name() + "' is a " +
                          std::string(comm.backend()) +
                          " communicator; only the emulator's take a wait timeout");
  }
  if (std::isnan(seconds) || seconds <= 0) {
    throw InvalidArgument("set_wait_timeout on comm '" + comm.name() + "', rank " +
                          std::to_string(comm.rank()) + ": the timeout (" + source + ") is " +
                          std::to_string(seconds) + " s; it must be > 0");
  }
  // At least 1 ms (0 ms means unset), at most kMaxTimeoutSeconds (no overflow of now() + it).
  const double capped_ms = std::fmin(seconds, kMaxTimeoutSeconds) * 1e3;
  emu->set_wait_timeout(std::chrono::milliseconds(std::max(1LL, std::llround(capped_ms))),
                        std::move(source));
}

}  // namespace twinccl
