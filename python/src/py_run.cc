// twinccl.run: the rank function on emulator threads, with the GIL held only while Python runs,
// launched by the one launcher of emulated runs (twinccl/emulated_run.h), as run() launches
// TWINCCL_BACKEND=emu: options, topology and output paths checked before any rank runs; with a
// topology (or a trace path) every rank's calls are recorded and the run is replayed on the
// topology afterwards, but the result comes back as data instead of printed text. Ctrl-C
// stops the run and the replay after it (py_interrupt.h; sim::ReplayOptions::stop_requested).
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "py_buffer.h"
#include "py_comm.h"
#include "py_interrupt.h"
#include "rank_baton.h"
#include "stuck_ranks.h"
#include "twinccl/emulated_run.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/run.h"
#include "twinccl/sim/replay.h"
#include "twinccl/trace/trace_file.h"

namespace py = pybind11;

namespace twinccl::python {

// Sets every option of `given` by name, checked (py_options.cc).
void set_emulator_options(emu::EmulatorOptions& options, const py::dict& given);

namespace {

// A recorded trace, kept so that a report can save it (twinccl replay) after the run.
struct PyTrace {
  sim::Trace trace;
  // Checked and written atomically, as every output file (twinccl/output_file.h).
  void save(const std::string& path) const {
    check_output_path("Report.save_trace(path)", path);
    write_output_file("Report.save_trace(path)", path,
                      [&](std::ostream& f) { f << trace::to_json(trace); });
  }
};

py::dict report_dict(const sim::ReplayResult& r) {
  py::list ranks, ops, links;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const sim::ReplayRank& k = r.ranks[i];
    py::dict d;
    d["rank"] = i;
    d["end_us"] = k.end_us;
    d["compute_us"] = k.compute_us;
    d["comm_us"] = k.comm_us;
    d["exposed_comm_us"] = k.exposed_comm_us;
    d["overlapped_us"] = k.overlapped_us;
    ranks.append(d);
  }
  for (const sim::ReplayOp& o : r.ops) {
    py::dict d;
    d["comm"] = o.comm;
    d["seq"] = o.seq;
    d["kind"] = std::string(name(o.kind));
    d["algorithm"] = o.algorithm;
    d["protocol"] = std::string(sim::name(o.protocol));
    d["nranks"] = o.nranks;
    d["bytes"] = o.bytes;
    d["start_us"] = o.start_us;
    d["end_us"] = o.end_us;
    d["time_us"] = o.time_us();
    ops.append(d);
  }
  for (const sim::LinkLoad& l : r.links) {
    py::dict d;
    d["name"] = l.name;
    d["bytes"] = l.bytes;
    d["busy_us"] = l.busy_us;
    d["utilisation"] = l.utilisation;
    links.append(d);
  }
  py::dict d;
  d["topology"] = r.topology;
  d["total_us"] = r.total_us;
  d["overlap_fraction"] = r.overlap_fraction();
  d["mean_exposed_comm_us"] = r.mean_exposed_comm_us();
  d["ranks"] = ranks;
  d["ops"] = ops;
  d["links"] = links;
  d["summary"] = sim::summarize_replay(r);
  return d;
}

// The rank function's Python error, for run_world: an AbortedError raised into Python (this rank
// was woken because another failed) goes back as the C++ AbortedError, so that run_world reports
// the rank that failed first, not a rank it woke.
[[noreturn]] void rethrow_rank_error(py::error_already_set& e, const py::object& aborted_type) {
  std::string message;
  bool aborted = false;
  {
    py::gil_scoped_acquire gil;
    aborted = e.matches(aborted_type);
    if (aborted) message = py::str(e.value());
  }
  if (aborted) throw AbortedError(message);
  throw;
}

// When and why the run stopped (the first of: a stop reason, a rank that failed), so that ranks
// still running Python code kStopRanksAfter later are stopped (py_interrupt.h).
class RunStopping {
 public:
  void note(const std::string& why) {  // any thread, GIL or not; "" is no reason
    if (why.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!since_) {
      since_ = std::chrono::steady_clock::now();
      why_ = why;
    }
  }
  // The time and reason of the stop, if any.
  std::optional<std::pair<std::chrono::steady_clock::time_point, std::string>> stop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!since_) return std::nullopt;
    return std::make_pair(*since_, why_);
  }

 private:
  std::mutex mu_;
  std::optional<std::chrono::steady_clock::time_point> since_;
  std::string why_;
};

// "rank R failed: Type: message" for the exception being handled (GIL not held).
std::string rank_failure(int rank, py::error_already_set* python_error) {
  std::string what;
  if (python_error != nullptr) {
    py::gil_scoped_acquire gil;
    try {
      what = std::string(py::str(python_error->type().attr("__name__"))) + ": " +
             std::string(py::str(python_error->value()));
    } catch (const py::error_already_set&) {  // its str() raised: the rank's own error goes on
      what = "an exception whose message could not be read";
    }
  } else {
    try {
      throw;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "a non-standard exception";
    }
  }
  constexpr std::size_t kLongest = 400;
  if (what.size() > kLongest) what = what.substr(0, kLongest) + "...";
  return "rank " + std::to_string(rank) + " failed: " + what;
}

// What a rank thread leaves in its Python thread state (threading.local values, context
// variables), dropped while the thread state is whole. Left to the thread state's teardown, a
// torch tensor with grad history (or a view) among them crashed the process: its destructor
// takes and gives back the GIL through torch's own pybind11, which deletes the thread state that
// is being cleared (gilstate counter already 0), and the teardown goes on with freed memory.
class ThreadLeftovers {
 public:
  ThreadLeftovers() = default;
  ThreadLeftovers(const ThreadLeftovers&) = delete;
  ThreadLeftovers& operator=(const ThreadLeftovers&) = delete;
  ~ThreadLeftovers() {     // GIL held
    py::error_scope keep;  // an exception on its way out stays as it is
    if (PyObject* d = PyThreadState_GetDict()) PyDict_Clear(d);
    PyThreadState* t = PyThreadState_Get();
    Py_CLEAR(t->context);
    PyErr_Clear();  // what the destructors raised: they would only be printed by the teardown
  }
};

py::object run(const py::function& fn, const py::dict& emulator_options,
               const std::string& topology, const std::string& trace_path,
               const std::string& timeline_path, const py::object& aborted_type,
               const py::object& swap_state, bool exit_if_stuck) {
  RunOptions options;
  options.p2p_per_peer_streams = true;  // torch.distributed: point-to-point per pair of ranks
  set_emulator_options(options, emulator_options);
  options.topology = topology;
  options.trace_path = trace_path;
  options.timeline_path = timeline_path;
  RunInterrupts interrupts(options.world_size);
  std::unique_ptr<RankBaton> baton;  // made once the options are checked
  const EmulatedRunCaller caller{"python", "twinccl.run(trace_path=...)",
                                 "twinccl.run(timeline_path=...)"};
  RunStopping stopping;
  StuckRanks stuck(options.world_size, exit_if_stuck);
  options.stop_requested = [&interrupts, &baton, &stopping, &stuck, &aborted_type] {
    std::string why = interrupts.poll();
    if (why.empty() && baton) why = baton->stop_reason();
    stopping.note(why);
    if (const auto stop = stopping.stop()) {  // ranks still in Python code are stopped in turn
      if (baton) baton->stop_sleepers(stop->second);  // and ranks in time.sleep at once
      py::gil_scoped_acquire gil;
      interrupts.stop_ranks_in_python(stop->first, stop->second, aborted_type);
      stuck.check(stop->first, stop->second, baton ? baton->holder() : -1);
    }
    return why;
  };
  // The one launcher of emulated runs (as run() for TWINCCL_BACKEND=emu): every option, the
  // topology and both output paths are checked here, before any rank runs.
  EmulatedRun launch(options, caller);
  // Each rank its own process state (rank_baton.h); None: the ranks share it.
  if (!swap_state.is_none())
    baton = std::make_unique<RankBaton>(swap_state.cast<py::function>(), options.timeout_s);
  try {
    py::gil_scoped_release nogil;
    launch.run([&](Communicator& world) {
      struct Returned {  // however the rank's body ends
        StuckRanks& stuck;
        int rank;
        ~Returned() { stuck.returned(rank); }
      } returned{stuck, world.rank()};
      auto state = std::make_shared<RankState>(world);
      CurrentRank current(state);
      RankTurn turn(baton.get(), world.rank());  // waits for the baton without the GIL
      try {
        py::gil_scoped_acquire gil;
        ThreadLeftovers leftovers;
        turn.arrived();
        RankInPython in_python(interrupts, world.rank());
        fn(world.rank());
      } catch (py::error_already_set& e) {
        stopping.note(rank_failure(world.rank(), &e));
        state->close();
        rethrow_rank_error(e, aborted_type);
      } catch (...) {
        stopping.note(rank_failure(world.rank(), nullptr));
        state->close();
        throw;
      }
      state->close();
    });
  } catch (...) {
    if (baton) baton->give_back_to_caller();
    // Interrupted: the ranks' errors (AbortedError, KeyboardInterrupt) follow from it.
    if (!interrupts.interrupted()) throw;
  }
  release_dropped_arrays();
  if (baton) {  // the caller's own state back
    baton->give_back_to_caller();
    if (!baton->failed().empty()) throw InternalError("twinccl.run: " + baton->failed());
  }
  if (interrupts.interrupted()) interrupts.raise();
  if (!launch.records()) return py::none();
  auto trace = std::make_shared<PyTrace>(PyTrace{launch.trace()});
  launch.save_trace();
  py::dict result;
  result["trace"] = py::cast(trace);
  if (launch.replays()) {
    sim::ReplayResult replayed;
    try {
      py::gil_scoped_release nogil;
      // Ctrl-C during the replay stops it too (its SimGrid child is killed within ~50 ms).
      replayed = launch.replay([&interrupts] { return !interrupts.poll().empty(); });
    } catch (const AbortedError&) {
      if (!interrupts.interrupted()) throw;
    }
    if (interrupts.interrupted()) interrupts.raise();
    launch.write_timeline(replayed);
    result["report"] = report_dict(replayed);
  }
  return result;
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<PyTrace, std::shared_ptr<PyTrace>>(m, "Trace", "A recorded run (twinccl replay).")
      .def("save", &PyTrace::save, py::arg("path"), "Writes the trace file (twinccl replay PATH).");
  m.def("_run", &run, py::arg("fn"), py::arg("emulator_options"), py::arg("topology"),
        py::arg("trace_path"), py::arg("timeline_path"), py::arg("aborted_type"),
        py::arg("swap_state"), py::arg("exit_if_stuck") = false);
}

}  // namespace twinccl::python
