// The preset of a topology's own family at another size, for the messages that tell a user which
// topology to name instead: a 4-node log on `mi355x-roce-2`, or on a file `twinccl calibrate`
// fitted from it, wants `mi355x-roce-4`, not another machine's cluster.
//
//   preset_with_nodes("mi355x-roce-2+nvlink_gbps=58.4,nic_gbps=50", 4, 32)  // "mi355x-roce-4"
//   preset_with_nodes("gb300-nvl72-cluster-1x64", 2, 128)  // "gb300-nvl72-cluster-2x64"
//   preset_with_nodes("mi300x-8", 2, 16)                   // "mi300x-cluster-2"
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace twinccl::topo {

// The name before any edits ("NAME+EDITS"), its trailing node count N ("-N") or rack count R
// ("-RxG") replaced by `nodes` (a one-node preset: its cluster, dgx-h100 -> h100-cluster-N,
// mi300x-8 -> mi300x-cluster-N, gb300-nvl72 -> gb300-nvl72-cluster-RxG), when that names a preset
// with `nodes` nodes whose first `ranks` GPUs span all of them; nullopt otherwise (a one-node
// preset, a file's own name, a size out of the preset's range, ranks that would not fill the nodes
// as the log ran).
std::optional<std::string> preset_with_nodes(std::string_view topology_name, int nodes, int ranks);

}  // namespace twinccl::topo
