#include "xml_hint_flags.h"

#include <exception>
#include <string>

#include "flag_values.h"
#include "twinccl/topologies/limits.h"

namespace twinccl::cli {

void add_xml_hint_flags(CLI::App* cmd, XmlHintFlags& f) {
  std::string models;
  for (const topo::GpuModelInfo& m : topo::gpu_models())
    models += (models.empty() ? "" : ", ") + m.name;
  auto last = [](CLI::Option* opt) { opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast); };
  last(cmd->add_option(
      "--gpu", f.gpu,
      "NCCL XML: the GPU model where the file lists GPUs only by PCI class or busid (" + models +
          ")"));
  last(cmd->add_option("--nvlink", f.nvlink,
                       "NCCL XML without <nvlink>: switch | direct | none (default: from the GPU "
                       "model)"));
  last(cmd->add_option("--nic-gbps", f.nic_gbps,
                       "NCCL XML: line rate of each NIC in Gb/s where the file has none")
           ->check([](const std::string& v) {  // 0 used to mean "not given", without a word
             try {
               const double gbps = parse_number_flag("--nic-gbps", v);
               if (gbps > 0 && gbps <= 1e6) return std::string();
             } catch (const std::exception&) {
             }
             return "'" + shown(v) + "' is not a NIC line rate in Gb/s (above 0, at most 1000000)";
           }));
  last(cmd->add_option("--gpu-count", f.gpu_count,
                       "NCCL XML listing devices by busid alone (AWS g5, p5 2023): the "
                       "machine's GPUs")
           ->check(CLI::Range(1, topo::limits::max_gpus)));
  last(cmd->add_option("--nic-count", f.nic_count,
                       "NCCL XML listing devices by busid alone: the machine's NICs")
           ->check(CLI::Range(0, 1 << 20)));
  last(cmd->add_option("--nodes", f.nodes,
                       "NCCL XML: that many copies of the file's node on a rail-optimized "
                       "fat-tree (NIC i of each node on rail i)")
           ->check(CLI::Range(1, 1024)));
}

topo::NcclXmlHints to_hints(const XmlHintFlags& f) {
  return {
      .gpu = f.gpu,
      .nvlink = f.nvlink.empty() ? topo::NvlinkHint::from_file : topo::parse_nvlink_hint(f.nvlink),
      .nic_gbps = f.nic_gbps,
      .gpu_count = f.gpu_count,
      .nic_count = f.nic_count,
      .nodes = f.nodes};
}

}  // namespace twinccl::cli
