// Simulated time for emulated runs: with TWINCCL_TOPOLOGY or TWINCCL_TRACE set, every rank's
// calls are recorded (trace::TraceRecorder, an observer of the rank's communicator) and, at exit,
// replayed on the topology.
//
//   SimulatedTime st(options);                 // records only when asked to
//   st.record(comm);                           // the rank's communicator, observed
//   st.report(std::cout);                      // summary, Perfetto timeline, saved trace
#pragma once

#include <iosfwd>
#include <memory>

#include "twinccl/run.h"
#include "twinccl/trace/recorder.h"

namespace twinccl::emu_backend {

class SimulatedTime {
 public:
  explicit SimulatedTime(const RunOptions& options);
  bool recording() const { return recorder_ != nullptr; }
  // Records the rank's world communicator (and its splits) when recording.
  void record(Communicator& comm) const;
  // After a successful run: saves the trace (TWINCCL_TRACE), prints the replay summary on the
  // topology and writes the Perfetto timeline (TWINCCL_TOPOLOGY, TWINCCL_TIMELINE).
  void report(std::ostream& out) const;

 private:
  RunOptions options_;
  std::unique_ptr<trace::TraceRecorder> recorder_;
};

}  // namespace twinccl::emu_backend
