// Internal: what flow playback (flow.cc) and trace replay (replay*.cc) share on the SimGrid side:
// an engine with the flow settings and a program's platform (flow_simgrid.cc), run in a forked
// child process (child_process.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "flow_program.h"

namespace simgrid::s4u {
class Host;
}

namespace twinccl::sim::detail {

// Starts a SimGrid engine with the flow settings (flow_simgrid.cc), builds the platform of
// `program`'s links and routes (one host per program rank; transfers are not read), lets
// `create_actors` create its actors on those hosts and runs the engine until they end. Needs a
// fresh process: call it inside run_in_child.
void run_simgrid(const FlowProgram& program,
                 const std::function<void(const std::vector<simgrid::s4u::Host*>&)>& create_actors);

// Runs `simulate` in a forked child process (fresh engine, clock and platform; it dies with its
// parent) and returns what it returned. A ConfigError, DeadlockError, InvalidArgument or
// MismatchError thrown by `simulate` is rethrown as such with its message; anything else (another
// exception, a signal, a short answer) throws InternalError starting with `what`.
std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulate,
                                 std::size_t expected_values, const char* what);
// The same; `context` (what was simulated: "16 ranks, 240 transfers on 64 links") joins `what` in
// every error. A child killed by a signal is reported with the signal's name and the last lines
// SimGrid printed on stderr.
std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulate,
                                 std::size_t expected_values, const char* what,
                                 const std::string& context);
// The same; `stop` (may be empty) is asked about every 50 ms while the child runs: true kills the
// child and throws AbortedError.
std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulate,
                                 std::size_t expected_values, const char* what,
                                 const std::string& context, const std::function<bool()>& stop);

}  // namespace twinccl::sim::detail
