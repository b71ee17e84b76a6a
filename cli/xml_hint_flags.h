// The NCCL XML hints as command-line flags, shared by `perf` and `topo`: --gpu, --nvlink,
// --nic-gbps, --gpu-count, --nic-count, --nodes (topologies/.../nccl_xml_hints.h says what each
// tells the importer).
//
//   XmlHintFlags flags;
//   add_xml_hint_flags(cmd, flags);                 // before parsing
//   topo::NcclXmlHints hints = to_hints(flags);     // after; throws InvalidArgument on --nvlink
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "twinccl/topologies/nccl_xml_hints.h"

namespace twinccl::cli {

struct XmlHintFlags {
  std::string gpu, nvlink;  // "" = not given
  double nic_gbps = 0;
  int gpu_count = 0, nic_count = -1, nodes = 1;
};

void add_xml_hint_flags(CLI::App* cmd, XmlHintFlags& flags);
topo::NcclXmlHints to_hints(const XmlHintFlags& flags);

}  // namespace twinccl::cli
