// Data type and reduce op mapping (see types.h).
#include "nccl/types.h"

#include <string>

#include "nccl/check.h"
#include "twinccl/errors.h"
#include "twinccl/reduce_kernels.h"

namespace twinccl::nccl {

ncclDataType_t to_nccl(DataType type) {
  switch (type) {
    case DataType::int8:
      return ncclInt8;
    case DataType::uint8:
      return ncclUint8;
    case DataType::int32:
      return ncclInt32;
    case DataType::uint32:
      return ncclUint32;
    case DataType::int64:
      return ncclInt64;
    case DataType::uint64:
      return ncclUint64;
    case DataType::float16:
      return ncclFloat16;
    case DataType::bfloat16:
      return ncclBfloat16;
    case DataType::float32:
      return ncclFloat32;
    case DataType::float64:
      return ncclFloat64;
    case DataType::float8_e4m3:
    case DataType::float8_e5m2:
      if (api().nccl_version < 22400) {
        throw InvalidArgument(std::string(name(type)) +
                              " needs NCCL >= 2.24; the loaded library (" + api().nccl_path +
                              ") is " + nccl_version_text(api().nccl_version));
      }
      return type == DataType::float8_e4m3 ? ncclFloat8e4m3 : ncclFloat8e5m2;
  }
  throw InvalidArgument("invalid data type " + std::to_string(static_cast<int>(type)) +
                        " for NCCL");
}

ncclRedOp_t create_reduce_op(const ReduceOp& op, DataType type, ncclComm_t comm) {
  switch (op.kind) {
    case ReduceKind::sum:
      return ncclSum;
    case ReduceKind::prod:
      return ncclProd;
    case ReduceKind::min:
      return ncclMin;
    case ReduceKind::max:
      return ncclMax;
    case ReduceKind::avg:
      return ncclAvg;
    case ReduceKind::premul_sum: {
      alignas(8) unsigned char scalar[8] = {};  // one element of `type`
      store_element(type, scalar, 0, op.scalar);
      ncclRedOp_t created{};
      check_nccl(
          api().ncclRedOpCreatePreMulSum(&created, scalar, to_nccl(type), ncclScalarHostImmediate,
                                         comm),
          comm,
          "api().ncclRedOpCreatePreMulSum(" + to_string(op) + ", " + std::string(name(type)) + ")");
      return created;
    }
  }
  throw InvalidArgument("invalid reduce op kind " + std::to_string(static_cast<int>(op.kind)) +
                        " for NCCL");
}

void destroy_reduce_op(ncclRedOp_t op, ncclComm_t comm) {
  if (static_cast<int>(op) >= static_cast<int>(ncclNumOps)) (void)api().ncclRedOpDestroy(op, comm);
}

}  // namespace twinccl::nccl
