// The emulator's Work: completed by the rank's stream with success or an exception.
//
//   auto work = std::make_shared<emu::EmuWork>(world);
//   ... work->complete(nullptr) or work->complete(std::current_exception());
//   Work(work).wait();
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>

#include "twinccl/emu/world.h"
#include "twinccl/work.h"

namespace twinccl::emu {

class EmuWork final : public WorkState {
 public:
  void complete(std::exception_ptr error);
  void wait() override;
  bool test() override;
  bool wait_for(std::chrono::nanoseconds timeout) override;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace twinccl::emu
