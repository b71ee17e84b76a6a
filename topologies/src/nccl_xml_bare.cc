// NCCL XML import: files that list devices by busid alone (nccl_xml_import.h).
//
// How it works. Some published files give NCCL only where devices sit, for NUMA and PCIe-switch
// placement, and leave what they are to NCCL's run-time detection: AWS's g5.48xlarge file lists
// nine bare <pci busid> under the two <cpu>s (its 8 A10G GPUs and its EFA NIC); the 2023
// p5.48xlarge file lists 4 bare NICs behind each of 8 PCIe switches and no GPU at all ("Each group
// has 1 GPUs and 4 NIC behind a PCIe switch. GPUs are not reported in this file."). Nothing in
// the file tells a GPU from a NIC, so the user states what the machine has, and the importer
// places it on the slots, in file order:
//
//   bare slots == gpu-count + nic-count   the first gpu-count slots are GPUs, the rest NICs
//                                         (g5: 8 + 1 = 9; its NIC, 00:15.0, is listed last)
//   bare slots == nic-count               every slot is a NIC; the GPUs are absent and one sits
//                                         behind each PCIe switch holding bare NICs, on the
//                                         same link as its NICs (p5 2023: 32 NICs, 8 switches)
//
// Anything else is a ConfigError with the counts. Without --gpu, --gpu-count and --nic-count the
// file is refused with a message naming exactly the missing ones. A bare slot has no link
// attributes: it gets NCCL's fallback (8 GT/s rate, x16), as bare bridges do; NICs without
// --nic-gbps take their PCIe link's rate, with the usual warning.
#include <map>

#include "input_checks.h"
#include "nccl_xml_import.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo::nccl_xml {

void XmlImport::place_bare_devices() {
  const int slots = static_cast<int>(bare_.size());
  std::string missing;
  auto need = [&](bool absent, const std::string& flag) {
    if (absent) missing += (missing.empty() ? "" : ", ") + flag;
  };
  need(hinted_ == nullptr, "--gpu MODEL");
  need(hints_.gpu_count <= 0, "--gpu-count N");
  need(hints_.nic_count < 0, "--nic-count M");
  if (!missing.empty()) {
    fail("<system>",
         "no <gpu> element and no GPU-class <pci>: its " + std::to_string(slots) +
             " <pci> device(s) carry only a busid (NCCL reads what they are from the machine at "
             "run time), so GPUs cannot be told from NICs; state what the machine has with " +
             missing +
             " (the first N bare devices in file order are GPUs and the next M NICs; or, when M "
             "equals the bare devices, all are NICs and one GPU sits behind each PCIe switch "
             "holding them). AWS g5.48xlarge: --gpu a10g --gpu-count 8 --nic-count 1 "
             "--nic-gbps 100; p5.48xlarge (2023 file): --gpu h100 --gpu-count 8 --nic-count 32 "
             "--nic-gbps 100");
  }
  auto link_of = [&](const BareDevice& d) {
    return d.pci->get_optional<std::string>("<xmlattr>.link_speed") ? pcie_link(*d.pci, d.where)
                                                                    : fallback_link();
  };
  auto add_bare_nic = [&](const BareDevice& d) {
    const LinkSpec link = link_of(d);
    double gbps = hints_.nic_gbps / 8.0;
    if (gbps == 0) {
      gbps = link.bandwidth_gbps;
      ++nics_at_pcie_rate_;
    }
    add_nic_vertex(nics_, gbps, d.parent, link);
  };
  const int gpus = hints_.gpu_count;
  const int nics = hints_.nic_count;
  if (gpus > limits::max_gpus) {
    fail("<system>", "--gpu-count " + std::to_string(gpus) + " is past the cap");
  }
  if (slots == gpus + nics) {
    for (int i = 0; i < slots; ++i) {
      const BareDevice& d = bare_[static_cast<std::size_t>(i)];
      if (i < gpus) {
        add_slot_gpu(d.parent, link_of(d), d.busid, d.where, d.numa);
      } else {
        add_bare_nic(d);
      }
    }
    notes_.push_back(std::to_string(slots) + " bare <pci> devices: the first " +
                     std::to_string(gpus) + " taken as GPUs and the next " + std::to_string(nics) +
                     " as NICs, in file order (--gpu-count, --nic-count)");
    return;
  }
  if (slots != nics) {
    fail("<system>", std::to_string(slots) + " bare <pci> devices, but --gpu-count " +
                         std::to_string(gpus) + " and --nic-count " + std::to_string(nics) +
                         " place either " + std::to_string(gpus + nics) + " (GPUs and NICs) or " +
                         std::to_string(nics) + " (NICs only, GPUs one per PCIe switch)");
  }
  // Every slot a NIC; the GPUs behind the switches holding them, in order of first appearance.
  std::vector<VertexId> switches;
  std::map<VertexId, const BareDevice*> first_nic;
  for (const BareDevice& d : bare_) {
    add_bare_nic(d);
    if (d.under_switch && first_nic.emplace(d.parent, &d).second) switches.push_back(d.parent);
  }
  if (static_cast<int>(switches.size()) != gpus) {
    fail("<system>",
         "--nic-count " + std::to_string(nics) +
             " takes every bare <pci> as a NIC; "
             "the GPUs then sit one behind each PCIe switch holding NICs, and the file has " +
             std::to_string(switches.size()) + " such switches, not --gpu-count " +
             std::to_string(gpus));
  }
  for (VertexId sw : switches) {
    const BareDevice& d = *first_nic[sw];
    add_slot_gpu(sw, link_of(d), "gpu-behind-" + d.busid, d.where, d.numa);
  }
  notes_.push_back(std::to_string(slots) + " bare <pci> devices taken as NICs (--nic-count); " +
                   std::to_string(gpus) +
                   " GPUs placed one behind each PCIe switch holding them, on their NICs' link");
}

// A GPU on a slot (or behind a switch) of a bare file: numbered in placement order, as NCCL
// numbers GPUs by PCI order; its model comes from --gpu (resolve_models()).
void XmlImport::add_slot_gpu(VertexId parent, const LinkSpec& link, const std::string& busid,
                             const std::string& where, int numa) {
  const int dev = static_cast<int>(gpus_.size());
  const VertexId v = add_gpu_vertex(dev, dev, parent, link);
  ++pci_only_gpus_;
  gpus_.push_back(GpuEntry{v, busid, where, dev, 0, numa, nullptr, {}});
}

}  // namespace twinccl::topo::nccl_xml
