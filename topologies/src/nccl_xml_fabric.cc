// NCCL XML import, second pass: the GPUs' model and their NVLinks (nccl_xml_import.h).
//
// Models: --gpu wins (a file sm that contradicts it is an error); else the PCI vendor/device id;
// else the <gpu sm>. A GPU listed only by PCI class needs one of the first two: without them the
// file is refused, naming --gpu. NVLinks: the file's <nvlink>s as NCCL reads them (a target that
// is the GPU itself is ignored; NVSwitch targets by tclass 0x068000, by a <pci class="0x068000">
// busid or as NCCL's placeholder "fffffff:ff:ff.0"). When the file lists none, the fabric comes
// from --nvlink, or, for PCI-only GPUs of a model with NVLink (or --gpu), from the model: more
// than 4 GPUs an NVSwitch (HGX 8-GPU boards), else a full mesh; 8 V100 SXM2 the DGX-1 cube-mesh.
// A GPU that should have NVLink and shows none gets a warning instead of silent PCIe speeds.
#include <algorithm>

#include "input_checks.h"
#include "nccl_xml_attributes.h"
#include "nccl_xml_import.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo::nccl_xml {
namespace {
constexpr std::string_view kNvSwitchClass = "0x068000";
constexpr std::string_view kCpuClass = "0x068001";
constexpr int kMaxNvlinks = 1024;  // NVLinks of one GPU (an H100 has 18)

bool placeholder_busid(const std::string& target) {  // NCCL's "fffffff:ff:ff.0"
  return target.find('f') != std::string::npos &&
         target.find_first_not_of("f:.0") == std::string::npos;
}
int default_nvlinks(int sm) { return sm >= 90 ? 18 : sm >= 80 ? 12 : sm >= 70 ? 6 : 0; }
int nvswitch_chips(int sm) { return sm >= 100 ? 2 : sm >= 90 ? 4 : sm >= 80 ? 6 : 6; }
std::string models_with_nvlink(int sm) {
  std::string out;
  for (const GpuModelInfo& m : gpu_models()) {
    if (m.sm == sm && m.nvlinks > 0) out += (out.empty() ? "" : ", ") + m.name;
  }
  return out;
}
}  // namespace

void XmlImport::resolve_models() {
  int missing = 0;
  for (GpuEntry& g : gpus_) {
    if (hinted_ != nullptr) {
      if (g.sm != 0 && g.sm != hinted_->sm) {
        fail(g.where, "sm=" + std::to_string(g.sm) + " contradicts --gpu " +
                          std::string(hinted_->name) + " (sm " + std::to_string(hinted_->sm) + ")");
      }
      if (g.model != nullptr && g.model != hinted_ && g.vertex == gpus_.front().vertex) {
        warnings_.push_back("the PCI id says " + std::string(g.model->description) + "; --gpu " +
                            std::string(hinted_->name) + " taken");
      }
      g.model = hinted_;
    }
    if (g.sm == 0 && g.model != nullptr) g.sm = g.model->sm;
    if (g.sm == 0) ++missing;
  }
  if (missing > 0) {
    fail("<system>", std::to_string(missing) +
                         " GPU(s) are listed only as PCI devices (class 0x0302: no <gpu> element, "
                         "no known vendor/device id), so their model cannot be read from the file "
                         "(NCCL detects GPUs and NVLinks at run time); state it with --gpu MODEL "
                         "(" +
                         model_names() + ")");
  }
  model_ = gpus_.front().model;
  for (const GpuEntry& g : gpus_) {
    if (arch_for_sm(g.sm) != arch_for_sm(gpus_.front().sm)) {
      fail(g.where, "sm=" + std::to_string(g.sm) + " differs from the first GPU's sm=" +
                        std::to_string(gpus_.front().sm) + " (one architecture per node)");
    }
    if (g.model != model_) model_ = nullptr;
  }
  const int sm = gpus_.front().sm;
  arch_ = arch_for_sm(sm);
  nvlink_gbps_ =
      model_ != nullptr && model_->nvlink_gbps > 0 ? model_->nvlink_gbps : nvlink_gbps_for_sm(sm);
  if (model_ != nullptr) {
    notes_.push_back("GPU model " + std::string(model_->description) +
                     (hinted_ != nullptr ? ", from --gpu" : ", from the PCI device id"));
  }
}

void XmlImport::add_nvlinks() {
  std::map<std::string, const GpuEntry*> gpu_by_busid;
  for (const GpuEntry& g : gpus_) gpu_by_busid[g.busid] = &g;
  std::set<std::string> switches = switch_busids_;
  int listed = 0, to_self = 0;
  for (const GpuEntry& g : gpus_) {
    for (const ptree* nvl : g.nvlinks) {
      const std::string target = lowercase_ascii(required(*nvl, g.where + " <nvlink>", "target"));
      const std::string tclass = lowercase_ascii(nvl->get<std::string>("<xmlattr>.tclass", ""));
      if (target == g.busid) {
        ++to_self;
      } else {
        ++listed;
        if (tclass == kNvSwitchClass || placeholder_busid(target)) switches.insert(target);
      }
    }
  }
  if (to_self > 0) {
    notes_.push_back(std::to_string(to_self) +
                     " <nvlink> whose target is its own GPU: ignored, as NCCL ignores it");
  }
  if (listed == 0) {
    const bool partial = pci_only_gpus_ > 0 || hinted_ != nullptr;
    if (hints_.nvlink != NvlinkHint::from_file ||
        (partial && model_ != nullptr && model_->nvlinks > 0)) {
      add_model_fabric();
    } else {
      warn_missing_nvlink();
    }
    return;
  }
  if (hints_.nvlink != NvlinkHint::from_file) {
    warnings_.push_back("--nvlink ignored: the file lists its NVLinks");
  }
  VertexId nvswitch = -1;
  std::set<std::pair<int, int>> gpu_pairs;
  for (const GpuEntry& g : gpus_) {
    int switch_lanes = 0;
    for (const ptree* nvl : g.nvlinks) {
      const std::string target = lowercase_ascii(required(*nvl, g.where + " <nvlink>", "target"));
      if (target == g.busid) continue;
      const std::string where = g.where + " <nvlink target=" + input::echo(target) + ">";
      const int count = required_int(*nvl, where, "count", 1, kMaxNvlinks);
      if (nvlink_gbps_ <= 0) {
        fail(where, "sm=" + std::to_string(g.sm) +
                        " has no known NVLink bandwidth (sm 60, 70, 80, 86, 90, 100)");
      }
      const LinkSpec link{.type = LinkType::nvlink,
                          .bandwidth_gbps = count * nvlink_gbps_,
                          .latency_us = PresetLatencies::nvlink_us,
                          .lanes = count};
      const std::string tclass = lowercase_ascii(nvl->get<std::string>("<xmlattr>.tclass", ""));
      if (switches.count(target) > 0) {
        switch_lanes += count;
        if (switch_lanes > kMaxNvlinks) {
          fail(where, "the GPU's NVLinks to NVSwitches add up to more than " +
                          std::to_string(kMaxNvlinks) + " (the cap)");
        }
      } else if (const auto peer = gpu_by_busid.find(target); peer != gpu_by_busid.end()) {
        const auto pair = std::minmax(g.dev, peer->second->dev);
        if (gpu_pairs.insert(pair).second) builder_.connect(g.vertex, peer->second->vertex, link);
      } else if (tclass == kCpuClass && cpus_.count(g.numa) > 0) {
        builder_.connect(g.vertex, cpus_.at(g.numa), link);
      } else {
        fail(where,
             "target is neither a GPU busid, an NVSwitch (tclass 0x068000) nor a CPU "
             "(tclass 0x068001); tclass=" +
                 input::echo(tclass));
      }
    }
    if (switch_lanes > 0) {
      if (nvswitch < 0) {
        nvswitch = builder_.add_vertex({.kind = VertexKind::nvswitch,
                                        .name = "nvswitch",
                                        .node = 0,
                                        .physical_switches = static_cast<int>(switches.size())});
      }
      builder_.connect(g.vertex, nvswitch,
                       {.type = LinkType::nvlink,
                        .bandwidth_gbps = switch_lanes * nvlink_gbps_,
                        .latency_us = PresetLatencies::nvlink_us,
                        .lanes = switch_lanes});
    }
  }
}

// NVLinks the file does not list, from --nvlink or the GPU model (see the top of this file).
void XmlImport::add_model_fabric() {
  const int n = static_cast<int>(gpus_.size());
  const int sm = gpus_.front().sm;
  const int links = model_ != nullptr ? model_->nvlinks : default_nvlinks(sm);
  NvlinkHint fabric = hints_.nvlink;
  const std::string why = hints_.nvlink != NvlinkHint::from_file ? "from --nvlink"
                          : hinted_ != nullptr                   ? "from --gpu"
                                                                 : "from the GPU model";
  if (fabric == NvlinkHint::none || n == 1) return;
  const std::string name =
      model_ != nullptr ? std::string(model_->name) : "sm " + std::to_string(sm);
  if (links == 0 || nvlink_gbps_ <= 0) {
    throw InvalidArgument("--nvlink: the GPUs (" + name + ") have no NVLink");
  }
  if (fabric == NvlinkHint::from_file) {
    fabric = n > 4 && !(sm == 70 && n == 8) ? NvlinkHint::nvswitch : NvlinkHint::direct;
  }
  const auto link = [&](int lanes) {
    return LinkSpec{.type = LinkType::nvlink,
                    .bandwidth_gbps = lanes * nvlink_gbps_,
                    .latency_us = PresetLatencies::nvlink_us,
                    .lanes = lanes};
  };
  std::string shape;
  if (fabric == NvlinkHint::nvswitch) {
    const VertexId sw = builder_.add_vertex({.kind = VertexKind::nvswitch,
                                             .name = "nvswitch",
                                             .node = 0,
                                             .physical_switches = nvswitch_chips(sm)});
    for (const GpuEntry& g : gpus_) builder_.connect(g.vertex, sw, link(links));
    shape = "one NVSwitch fabric";
  } else if (sm == 70 && n == 8) {
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (cube_mesh_links(a, b) > 0) {
          builder_.connect(gpus_[a].vertex, gpus_[b].vertex, link(cube_mesh_links(a, b)));
        }
      }
    }
    shape = "the DGX-1 hybrid cube-mesh (GPUs in file order)";
  } else {
    const int per_pair = links / (n - 1);
    if (per_pair == 0) {
      throw InvalidArgument("--nvlink direct: " + std::to_string(n) + " GPUs with " +
                            std::to_string(links) + " NVLinks each cannot form a full mesh");
    }
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b)
        builder_.connect(gpus_[a].vertex, gpus_[b].vertex, link(per_pair));
    }
    shape = "a full mesh of " + std::to_string(per_pair) + " NVLinks per GPU pair";
  }
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", nvlink_gbps_);
  notes_.push_back("NVLink not in the file: " + shape + ", " + std::to_string(links) +
                   " NVLinks x " + rate + " GB/s per GPU (" + name + "), " + why +
                   "; --nvlink none leaves it out");
}

void XmlImport::warn_missing_nvlink() {
  if (gpus_.size() < 2) return;
  const int sm = gpus_.front().sm;
  if (model_ != nullptr && model_->nvlinks > 0) {
    warnings_.push_back("the GPUs are " + std::string(model_->description) +
                        " but the file lists no <nvlink>: predictions use PCIe only; if the "
                        "machine has NVLink give --nvlink switch (or direct), --nvlink none "
                        "silences this");
  } else if (model_ == nullptr && !models_with_nvlink(sm).empty()) {
    warnings_.push_back("the GPUs (sm " + std::to_string(sm) +
                        ") show no NVLink: predictions use PCIe only; SXM parts of this sm (" +
                        models_with_nvlink(sm) + ") have NVLink: if these are SXM give --gpu " +
                        "MODEL or --nvlink switch; --nvlink none (or a PCIe --gpu) silences this");
  }
}

}  // namespace twinccl::topo::nccl_xml
