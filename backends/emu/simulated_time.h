// Simulated time for emulated runs: with TWINCCL_TOPOLOGY or TWINCCL_TRACE set, every rank's
// calls are recorded (emu::TraceRecorder) and, at exit, replayed on the topology.
//
//   SimulatedTime st(options);                 // records only when asked to
//   fn(st.wrap(comm, rank));                   // the rank's communicator, recorded
//   st.report(std::cout);                      // summary, Perfetto timeline, saved trace
#pragma once

#include <iosfwd>
#include <memory>

#include "twinccl/emu/trace.h"
#include "twinccl/run.h"

namespace twinccl::emu_backend {

class SimulatedTime {
 public:
  explicit SimulatedTime(const RunOptions& options);
  bool recording() const { return recorder_ != nullptr; }
  // The communicator the rank function sees: `comm` itself, or a recording wrapper.
  std::unique_ptr<Communicator> wrap(Communicator& comm) const;
  // After a successful run: saves the trace (TWINCCL_TRACE), prints the replay summary on the
  // topology and writes the Perfetto timeline (TWINCCL_TOPOLOGY, TWINCCL_TIMELINE).
  void report(std::ostream& out) const;

 private:
  RunOptions options_;
  std::unique_ptr<emu::TraceRecorder> recorder_;
};

}  // namespace twinccl::emu_backend
