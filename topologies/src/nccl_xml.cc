// NCCL_TOPO_FILE import (one node) with Boost.PropertyTree's XML parser.
//
// How it works. The XML nests <system> > <cpu numaid> > <pci busid class link_speed link_width>
// (bridges nest further) > <gpu dev sm rank> (with <nvlink target count tclass/>) or <nic> >
// <net name dev speed>. First pass, walking the tree: every <cpu> becomes a cpu vertex, every
// bridge <pci> a pcie_switch, every <gpu> a GPU and every <net> a NIC, each linked to its parent
// with the PCIe bandwidth its own <pci> declares (NCCL's table: 0.1875 GB/s per lane at 2.5 GT/s,
// doubling per generation). Second pass: NVLinks. Targets that are NVSwitches (tclass 0x068000
// or a <pci class="0x068000"> busid) all go to one nvswitch vertex, as NCCL merges NVSwitches;
// a GPU busid gives a direct GPU-GPU link (listed by both GPUs, added once); tclass 0x068001 is
// the CPU (C2C). NVLink bandwidth per link comes from the GPUs' sm: 80 -> 20, 90 -> 20.6,
// 100 -> 40.1 GB/s. Elements NCCL writes that do not change the graph (<c2c>, comments) are
// skipped; a pci device that is neither bridge, GPU, NIC nor NVSwitch (NVMe...) is left out.
// Hostile files: nesting is capped before parsing (input_checks.h), every number attribute is
// range-checked, values in messages are cut (input::echo) and a location names the <cpu> and the
// innermost elements only, so a 10k-deep bridge chain gives neither recursion nor long messages.
#include <algorithm>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "input_checks.h"
#include "nccl_xml_attributes.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::topo {
namespace {

using boost::property_tree::ptree;
constexpr std::string_view kNvSwitchClass = "0x068000";
constexpr std::string_view kCpuClass = "0x068001";
constexpr double kCpuInterconnectGbps = 40.0;  // same estimate as the DGX presets
constexpr int kMaxNumaId = 4095;
constexpr int kMaxNvlinks = 1024;  // NVLinks of one GPU (an H100 has 18)

using nccl_xml::lower;
using nccl_xml::nested;

struct GpuEntry {
  VertexId vertex;
  std::string busid, where;
  int dev, sm, numa;
  std::vector<const ptree*> nvlinks;
};

class XmlImport {
 public:
  explicit XmlImport(std::string source)
      : source_(std::move(source)), builder_(std::filesystem::path(source_).stem().string()) {}

  Topology run(const ptree& doc) {
    const auto system = doc.get_child_optional("system");
    if (!system) fail("<system>", "missing root element <system version=\"1\">");
    required(*system, "<system>", "version");
    for (const auto& [tag, child] : *system) {
      if (tag == "cpu") add_cpu(child);
    }
    if (gpus_.empty()) fail("<system>", "no <gpu> element (a topology needs at least one GPU)");
    const std::vector<VertexId> cpus = cpu_vertices();
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      for (std::size_t j = i + 1; j < cpus.size(); ++j) {
        builder_.connect(cpus[i], cpus[j],
                         {.type = LinkType::cpu_interconnect,
                          .bandwidth_gbps = kCpuInterconnectGbps,
                          .latency_us = PresetLatencies::cpu_interconnect_us});
      }
    }
    add_nvlinks();
    builder_.arch(arch_)
        .pcie_gen(max_pcie_gen_)
        .description("imported from NCCL topology XML " + source_ + ": " +
                     std::to_string(gpus_.size()) + " GPUs, " + std::to_string(nics_) + " NICs");
    return builder_.seal();
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw ConfigError(source_ + ": " + where + ": " + message);
  }

  std::string required(const ptree& node, const std::string& where, const std::string& attr) const {
    return nccl_xml::attribute(node, where, attr, source_);
  }
  int required_int(const ptree& node, const std::string& where, const std::string& attr, int lo,
                   int hi) const {
    return nccl_xml::int_attribute(node, where, attr, lo, hi, source_);
  }

  std::vector<VertexId> cpu_vertices() const {
    std::vector<VertexId> out;
    for (const auto& [numa, v] : cpus_) out.push_back(v);
    return out;
  }

  // link_speed "16.0 GT/s PCIe" (or "16 GT/s") and link_width "16" -> a PCIe link.
  LinkSpec pcie_link(const ptree& pci, const std::string& where) {
    const std::string speed = required(pci, where, "link_speed");
    const int width = required_int(pci, where, "link_width", 1, 32);
    const std::map<std::string, int> gens{{"2.5", 1},  {"5", 2},  {"5.0", 2},  {"8", 3},
                                          {"8.0", 3},  {"16", 4}, {"16.0", 4}, {"32", 5},
                                          {"32.0", 5}, {"64", 6}, {"64.0", 6}};
    const auto it = gens.find(speed.substr(0, speed.find(' ')));
    if (it == gens.end() || speed.find("GT/s") == std::string::npos) {
      fail(where, "link_speed " + input::echo(speed) +
                      " is not a PCIe speed (2.5, 5, 8, 16, 32, 64 GT/s)");
    }
    return {.type = LinkType::pcie,
            .bandwidth_gbps = pcie_bandwidth_gbps(it->second, width),
            .latency_us = PresetLatencies::pcie_us,
            .lanes = width};
  }

  void add_cpu(const ptree& cpu) {
    const int numa = required_int(cpu, "<cpu>", "numaid", -1, kMaxNumaId);
    const std::string where = "<cpu numaid=\"" + std::to_string(numa) + "\">";
    if (cpus_.count(numa) > 0) fail(where, "numaid " + std::to_string(numa) + " appears twice");
    if (cpus_.size() >= static_cast<std::size_t>(limits::max_xml_cpus)) {
      fail(where, "more than " + std::to_string(limits::max_xml_cpus) +
                      " <cpu> elements (the cap; each is a NUMA node)");
    }
    const VertexId v = builder_.add_vertex({.kind = VertexKind::cpu,
                                            .name = "cpu" + std::to_string(numa),
                                            .node = 0,
                                            .local_index = numa});
    cpus_[numa] = v;
    add_children(cpu, v, where, 1, numa, nullptr);
  }

  // Children of a <cpu> or bridge <pci>: nested <pci> and bare <nic>.
  // Recursion over bridges is bounded by limits::max_nesting_depth (checked before parsing).
  void add_children(const ptree& parent, VertexId parent_vertex, const std::string& where,
                    int depth, int numa, const ptree* parent_pci) {
    for (const auto& [tag, child] : parent) {
      if (tag == "pci") add_pci(child, parent_vertex, where, depth, numa);
      if (tag == "nic") {
        add_nic(child, parent_vertex, nested(where, depth, numa, "<nic>"), where, parent_pci);
      }
    }
  }

  void add_pci(const ptree& pci, VertexId parent, const std::string& parent_where, int depth,
               int numa) {
    const std::string busid =
        lower(required(pci, nested(parent_where, depth, numa, "<pci>"), "busid"));
    const std::string where =
        nested(parent_where, depth, numa, "<pci busid=" + input::echo(busid) + ">");
    const std::string cls = lower(pci.get<std::string>("<xmlattr>.class", ""));
    if (cls == kNvSwitchClass) {
      switch_busids_.insert(busid);
      return;
    }
    const auto gpu = pci.get_child_optional("gpu");
    const auto nic = pci.get_child_optional("nic");
    if (gpu) {
      add_gpu(*gpu, pci, busid, parent, where, numa);
    } else if (nic) {
      add_nic(*nic, parent, where + " <nic>", where, &pci);
    } else if (cls.rfind("0x0604", 0) == 0 || pci.count("pci") > 0) {
      const LinkSpec link = pcie_link(pci, where);
      // Named in order of appearance ("pcie0", ...) so drawings stay narrow; the busid is in
      // errors.
      const VertexId sw =
          builder_.add_switch(VertexKind::pcie_switch, "pcie" + std::to_string(bridges_++), 0);
      builder_.connect(sw, parent, link);
      add_children(pci, sw, where, depth + 1, numa, &pci);
    }
  }

  void add_gpu(const ptree& gpu, const ptree& pci, const std::string& busid, VertexId parent,
               const std::string& pci_where, int numa) {
    const std::string where = pci_where + " <gpu>";
    const int dev = required_int(gpu, where, "dev", 0, limits::max_gpus - 1);
    const int sm = required_int(gpu, where, "sm", 0, 100000);
    const int rank = required_int(gpu, where, "rank", 0, limits::max_gpus - 1);
    const GpuArch arch = sm >= 100  ? GpuArch::blackwell
                         : sm >= 90 ? GpuArch::hopper
                         : sm >= 80 ? GpuArch::ampere
                                    : GpuArch::unknown;
    if (!gpus_.empty() && arch != arch_) {
      fail(where, "sm=" + std::to_string(sm) + " differs from the first GPU's sm=" +
                      std::to_string(gpus_.front().sm) + " (one architecture per node)");
    }
    arch_ = arch;
    const LinkSpec link = pcie_link(pci, pci_where);
    max_pcie_gen_ = std::max(max_pcie_gen_, gen_of(link));
    const VertexId v = builder_.add_vertex({.kind = VertexKind::gpu,
                                            .name = "gpu" + std::to_string(dev),
                                            .node = 0,
                                            .rank = rank,
                                            .local_index = dev});
    builder_.connect(v, parent, link);
    GpuEntry entry{v, busid, where, dev, sm, numa, {}};
    for (const auto& [tag, child] : gpu) {
      if (tag == "nvlink") entry.nvlinks.push_back(&child);
    }
    gpus_.push_back(std::move(entry));
  }

  static int gen_of(const LinkSpec& link) {
    for (int gen = 1; gen <= 6; ++gen) {
      if (pcie_bandwidth_gbps(gen, link.lanes) == link.bandwidth_gbps) return gen;
    }
    return 0;
  }

  // `where` names the <nic> element, `pci_where` the <pci> whose link it uses (when pci is set).
  void add_nic(const ptree& nic, VertexId parent, const std::string& where,
               const std::string& pci_where, const ptree* pci) {
    for (const auto& [tag, net] : nic) {
      if (tag != "net") continue;
      const std::string name = required(net, where + " <net>", "name");
      const std::string net_where = where + " <net name=" + input::echo(name) + ">";
      const int dev = required_int(net, net_where, "dev", 0, limits::max_vertices - 1);
      // Mb/s; 8 Mb/s is limits::min_bandwidth_gbps (1 MB/s), 2^31-1 Mb/s about 268 GB/s.
      const int speed_mbps = required_int(net, net_where, "speed", 8, INT32_MAX);
      const double port_gbps = speed_mbps / 8000.0;
      const VertexId v = builder_.add_vertex({.kind = VertexKind::nic,
                                              .name = "nic" + std::to_string(dev),
                                              .node = 0,
                                              .local_index = dev,
                                              .port_bandwidth_gbps = port_gbps});
      const LinkSpec link = pci != nullptr ? pcie_link(*pci, pci_where)
                                           : LinkSpec{.type = LinkType::pcie,
                                                      .bandwidth_gbps = port_gbps,
                                                      .latency_us = PresetLatencies::pcie_us};
      builder_.connect(v, parent, link);
      ++nics_;
    }
  }

  void add_nvlinks() {
    const double per_link_gbps = nvlink_link_bandwidth_gbps(arch_);
    std::map<std::string, const GpuEntry*> gpu_by_busid;
    for (const GpuEntry& g : gpus_) gpu_by_busid[g.busid] = &g;
    std::set<std::string> switches = switch_busids_;
    for (const GpuEntry& g : gpus_) {
      for (const ptree* nvl : g.nvlinks) {
        if (lower(nvl->get<std::string>("<xmlattr>.tclass", "")) == kNvSwitchClass) {
          switches.insert(lower(required(*nvl, g.where + " <nvlink>", "target")));
        }
      }
    }
    VertexId nvswitch = -1;
    std::set<std::pair<int, int>> gpu_pairs;
    for (const GpuEntry& g : gpus_) {
      int switch_lanes = 0;
      for (const ptree* nvl : g.nvlinks) {
        const std::string target = lower(required(*nvl, g.where + " <nvlink>", "target"));
        const std::string where = g.where + " <nvlink target=" + input::echo(target) + ">";
        const int count = required_int(*nvl, where, "count", 1, kMaxNvlinks);
        if (per_link_gbps <= 0) {
          fail(where,
               "sm=" + std::to_string(g.sm) + " has no known NVLink bandwidth (sm 80, 90, 100)");
        }
        const LinkSpec link{.type = LinkType::nvlink,
                            .bandwidth_gbps = count * per_link_gbps,
                            .latency_us = PresetLatencies::nvlink_us,
                            .lanes = count};
        const std::string tclass = lower(nvl->get<std::string>("<xmlattr>.tclass", ""));
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
                          .bandwidth_gbps = switch_lanes * per_link_gbps,
                          .latency_us = PresetLatencies::nvlink_us,
                          .lanes = switch_lanes});
      }
    }
  }

  std::string source_;
  TopologyBuilder builder_;
  std::map<int, VertexId> cpus_;
  std::vector<GpuEntry> gpus_;
  std::set<std::string> switch_busids_;
  GpuArch arch_ = GpuArch::unknown;
  int max_pcie_gen_ = 0;
  int nics_ = 0;
  int bridges_ = 0;
};

}  // namespace

Topology topology_from_nccl_xml(std::string_view text, std::string_view source) {
  const std::string src(source);
  input::check_xml_shape(text, src);
  ptree doc;
  try {
    std::istringstream in{std::string(text)};
    boost::property_tree::read_xml(in, doc);
  } catch (const boost::property_tree::xml_parser_error& e) {
    throw ConfigError(src + ":" + std::to_string(e.line()) +
                      ": malformed XML: " + e.message().substr(0, limits::max_echo_bytes));
  }
  try {
    return XmlImport(src).run(doc);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    if (what.rfind(src + ":", 0) == 0) throw;
    throw ConfigError(src + ": " + what);
  } catch (const boost::property_tree::ptree_error& e) {  // a check missed above
    throw ConfigError(src + ": unexpected XML content: " +
                      std::string(e.what()).substr(0, limits::max_echo_bytes));
  }
}

Topology load_nccl_xml(const std::filesystem::path& path) {
  return topology_from_nccl_xml(input::read_file(path, "NCCL topology file"), path.string());
}

}  // namespace twinccl::topo
