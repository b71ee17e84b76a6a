// An internal NCCL group around the several NCCL calls of one TwinCCL operation: inside it NCCL
// answers ncclSuccess to each call and only ncclGroupEnd may answer ncclInProgress, so calls on a
// non-blocking communicator never follow a pending one (the caller polls after end()).
//
//   InternalGroup group(t, op);  ...ncclSend/ncclRecv/ncclReduce...;  group.end();
#pragma once

#include "nccl/check.h"
#include "nccl/collectives.h"

namespace twinccl::nccl {

// ncclGroupStart now; end() issues, the destructor balances the group on an error path.
class InternalGroup {
 public:
  InternalGroup(const EnqueueTarget& t, const OpDesc& op) : t_(t), op_(op) {
    check_nccl_lazy(api().ncclGroupStart(), t_.comm,
                    [&] { return describe(op_, t_) + ": ncclGroupStart"; });
  }
  ~InternalGroup() {
    if (!ended_) (void)api().ncclGroupEnd();
  }
  InternalGroup(const InternalGroup&) = delete;
  InternalGroup& operator=(const InternalGroup&) = delete;
  void end() {
    ended_ = true;
    check_nccl_lazy(api().ncclGroupEnd(), t_.comm,
                    [&] { return describe(op_, t_) + ": ncclGroupEnd"; });
  }

 private:
  const EnqueueTarget& t_;
  const OpDesc& op_;
  bool ended_ = false;
};

}  // namespace twinccl::nccl
