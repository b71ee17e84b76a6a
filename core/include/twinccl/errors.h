// Typed errors. Everything TwinCCL throws derives from twinccl::Error.
//
//   try { comm.all_reduce(...); }
//   catch (const twinccl::MismatchError& e) { std::cerr << e.what(); }  // ranks disagree
//   catch (const twinccl::Error& e) { ... }                              // any TwinCCL error
#pragma once

#include <stdexcept>
#include <string>

namespace twinccl {

// Base of every error TwinCCL raises.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A user passed a bad value (null buffer, root out of range, count overflow, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Ranks of one communicator disagree about an operation (kind, count, dtype, root, ...).
class MismatchError : public Error {
 public:
  using Error::Error;
};

// A wait ran past its deadline (a rank never arrived, a Work::wait_for expired as an error).
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// The operation was cancelled because another rank failed or the communicator was aborted.
class AbortedError : public Error {
 public:
  using Error::Error;
};

// A program would deadlock (detected by the emulator's checker).
class DeadlockError : public Error {
 public:
  using Error::Error;
};

// The backend (NCCL, CUDA, the bootstrap store) reported a failure; its own message is kept.
class BackendError : public Error {
 public:
  using Error::Error;
};

// The system refused a resource TwinCCL needs (a thread could not be created: the process or
// cgroup reached its thread limit). The run is torn down cleanly: every started thread is joined.
class ResourceError : public Error {
 public:
  using Error::Error;
};

// Something that is the user's configuration, not a call: unknown preset, malformed file...
class ConfigError : public Error {
 public:
  using Error::Error;
};

// An invariant of TwinCCL itself was broken: a bug in TwinCCL, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace twinccl
