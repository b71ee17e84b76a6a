// NCCL_TOPO_FILE import (one node) with Boost.PropertyTree's XML parser.
//
// How it works. The XML nests <system> > <cpu numaid> > <pci busid class link_speed link_width>
// (bridges nest further) > <gpu dev sm rank> (with <nvlink target count tclass/>) or <nic> >
// <net name dev speed>. First pass, walking the tree: every <cpu> becomes a cpu vertex, every
// bridge <pci> a pcie_switch, every <gpu> a GPU and every <net> a NIC, each linked to its parent
// with the PCIe bandwidth its own <pci> declares (NCCL's table: 0.1875 GB/s per lane at 2.5 GT/s,
// doubling per generation; an empty link_speed is NCCL's fallback, the 8 GT/s rate, and
// link_width="0" reads 16, as NCCL reads them). Partial files as clouds publish them list GPUs
// and NICs only as PCI devices: a <pci> of class 0x0302/0x0300 is a GPU (model from its
// vendor/device id or the --gpu hint), one of class 0x02xxxx a NIC (rate from the hint, its id,
// or its PCIe link, with a warning). Second pass (nccl_xml_fabric.cc): models, then NVLinks.
// Elements NCCL writes that do not change the graph (<c2c>, comments) are skipped; a pci device
// that is neither bridge, GPU, NIC nor NVSwitch (NVMe...) is left out.
// Hostile files: nesting is capped before parsing (input_checks.h), every number attribute is
// range-checked, values in messages are cut (input::echo) and a location names the <cpu> and the
// innermost elements only, so a 10k-deep bridge chain gives neither recursion nor long messages.
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>

#include "input_checks.h"
#include "nccl_xml_attributes.h"
#include "nccl_xml_import.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::topo::nccl_xml {
namespace {
constexpr std::string_view kNvSwitchClass = "0x068000";
constexpr double kCpuInterconnectGbps = 40.0;  // same estimate as the DGX presets
constexpr int kMaxNumaId = 4095;
constexpr int kNcclFallbackGen = 3;  // NCCL's kvDictPciGen default: 60 x 100 Mb/s per lane
}  // namespace

XmlImport::XmlImport(std::string source, const NcclXmlHints& hints)
    : source_(std::move(source)),
      hints_(hints),
      builder_(std::filesystem::path(source_).stem().string()) {
  if (!hints_.gpu.empty()) {
    hinted_ = gpu_model(hints_.gpu);
    if (hinted_ == nullptr) {
      throw InvalidArgument("--gpu: unknown GPU model " + input::echo(hints_.gpu) +
                            " (known: " + model_names() + ")");
    }
  }
  if (hints_.nic_gbps != 0 && !(hints_.nic_gbps >= 1 && hints_.nic_gbps <= 1e6)) {
    throw InvalidArgument("--nic-gbps: must be in 1..1e6 Gb/s, got " +
                          std::to_string(hints_.nic_gbps));
  }
}

NcclXmlImport XmlImport::run(const ptree& doc) {
  const auto system = doc.get_child_optional("system");
  if (!system) fail("<system>", "missing root element <system version=\"1\">");
  required(*system, "<system>", "version");
  for (const auto& [tag, child] : *system) {
    if (tag == "cpu") add_cpu(child);
  }
  if (gpus_.empty() && !bare_.empty()) place_bare_devices();
  if (gpus_.empty()) fail_without_gpus();
  if (pci_only_gpus_ == 0 && (hints_.gpu_count > 0 || hints_.nic_count >= 0)) {
    warnings_.push_back("--gpu-count/--nic-count ignored: the file lists its GPUs");
  }
  std::vector<VertexId> cpus;
  for (const auto& [numa, v] : cpus_) cpus.push_back(v);
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    for (std::size_t j = i + 1; j < cpus.size(); ++j) {
      builder_.connect(cpus[i], cpus[j],
                       {.type = LinkType::cpu_interconnect,
                        .bandwidth_gbps = kCpuInterconnectGbps,
                        .latency_us = PresetLatencies::cpu_interconnect_us});
    }
  }
  resolve_models();
  add_nvlinks();
  if (nics_at_pcie_rate_ > 0) {
    warnings_.push_back(std::to_string(nics_at_pcie_rate_) +
                        " NIC(s) have no rate in the file (no <net speed>, no known PCI id): "
                        "each taken at its PCIe link's rate; state it with --nic-gbps");
  }
  if (empty_link_speeds_ > 0) {
    notes_.push_back(std::to_string(empty_link_speeds_) +
                     " <pci> with an empty link_speed: NCCL's fallback, the 8 GT/s rate per lane");
  }
  builder_.arch(arch_)
      .pcie_gen(max_pcie_gen_)
      .description("imported from NCCL topology XML " + source_ + ": " +
                   std::to_string(gpus_.size()) + " GPUs, " + std::to_string(nics_) + " NICs" +
                   (model_ != nullptr ? " (" + std::string(model_->description) + ")" : ""));
  return {builder_.seal(), warnings_, notes_};
}

void XmlImport::fail(const std::string& where, const std::string& message) const {
  throw ConfigError(source_ + ": " + where + ": " + message);
}

void XmlImport::fail_without_gpus() const {
  std::string detail = " (a topology needs at least one GPU)";
  if (unknown_devices_ > 0) {
    detail = ": its " + std::to_string(unknown_devices_) +
             " <pci> device(s) carry no class, no vendor/device id and no <gpu> or <nic> "
             "(NCCL reads them from the machine at run time), so GPUs cannot be told from NICs; "
             "describe this machine in a JSON topology instead (docs/topologies.md)";
  }
  fail("<system>", "no <gpu> element and no GPU-class <pci>" + detail);
}

LinkSpec XmlImport::fallback_link() const {
  return {.type = LinkType::pcie,
          .bandwidth_gbps = pcie_bandwidth_gbps(kNcclFallbackGen, 16),
          .latency_us = PresetLatencies::pcie_us,
          .lanes = 16};
}

std::string XmlImport::required(const ptree& node, const std::string& where,
                                const std::string& attr) const {
  return attribute(node, where, attr, source_);
}

int XmlImport::required_int(const ptree& node, const std::string& where, const std::string& attr,
                            int lo, int hi) const {
  return int_attribute(node, where, attr, lo, hi, source_);
}

// link_speed "16.0 GT/s PCIe" (or "16 GT/s"; "" = NCCL's fallback) and link_width "16" ("0"
// reads 16, as NCCL reads it) -> a PCIe link.
LinkSpec XmlImport::pcie_link(const ptree& pci, const std::string& where) {
  const std::string speed = required(pci, where, "link_speed");
  int width = required_int(pci, where, "link_width", 0, 32);
  if (width == 0) width = 16;
  const std::map<std::string, int> gens{{"2.5", 1},  {"5", 2},  {"5.0", 2},  {"8", 3},
                                        {"8.0", 3},  {"16", 4}, {"16.0", 4}, {"32", 5},
                                        {"32.0", 5}, {"64", 6}, {"64.0", 6}};
  int gen = kNcclFallbackGen;
  if (speed.empty()) {
    ++empty_link_speeds_;
  } else {
    const auto it = gens.find(speed.substr(0, speed.find(' ')));
    if (it == gens.end() || speed.find("GT/s") == std::string::npos) {
      fail(where, "link_speed " + input::echo(speed) +
                      " is not a PCIe speed (2.5, 5, 8, 16, 32, 64 GT/s, or empty)");
    }
    gen = it->second;
  }
  return {.type = LinkType::pcie,
          .bandwidth_gbps = pcie_bandwidth_gbps(gen, width),
          .latency_us = PresetLatencies::pcie_us,
          .lanes = width};
}

void XmlImport::add_cpu(const ptree& cpu) {
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
  // NCCL writes the host's architecture (graph/xml.cc: "x86_64", "arm64", "ppc64"; Grace: arm64)
  // and, on x86, its vendor ("GenuineIntel", "AuthenticAMD": ncclTopoGetCpuType's cpuid string).
  const auto arch = cpu.get_optional<std::string>("<xmlattr>.arch");
  if (arch == std::string("arm64")) {
    builder_.host_cpu(HostCpu::arm);
  } else if (arch == std::string("x86_64") &&
             cpu.get_optional<std::string>("<xmlattr>.vendor") == std::string("AuthenticAMD")) {
    builder_.host_cpu(HostCpu::x86_amd);
  }
  add_children(cpu, v, where, 1, numa, nullptr);
}

// Children of a <cpu> or bridge <pci>: nested <pci> and bare <nic>.
// Recursion over bridges is bounded by limits::max_nesting_depth (checked before parsing).
void XmlImport::add_children(const ptree& parent, VertexId parent_vertex, const std::string& where,
                             int depth, int numa, const ptree* parent_pci) {
  for (const auto& [tag, child] : parent) {
    if (tag == "pci") add_pci(child, parent_vertex, where, depth, numa);
    if (tag == "nic") {
      add_nic(child, parent_vertex, nested(where, depth, numa, "<nic>"), where, parent_pci);
    }
  }
}

void XmlImport::add_pci(const ptree& pci, VertexId parent, const std::string& parent_where,
                        int depth, int numa) {
  const std::string busid =
      lowercase_ascii(required(pci, nested(parent_where, depth, numa, "<pci>"), "busid"));
  const std::string where =
      nested(parent_where, depth, numa, "<pci busid=" + input::echo(busid) + ">");
  const std::string cls = lowercase_ascii(pci.get<std::string>("<xmlattr>.class", ""));
  if (cls == kNvSwitchClass) {
    switch_busids_.insert(busid);
    return;
  }
  const auto gpu = pci.get_child_optional("gpu");
  const auto nic = pci.get_child_optional("nic");
  if (gpu) {
    add_gpu(&*gpu, pci, busid, parent, where, numa);
  } else if (nic) {
    add_nic(*nic, parent, where + " <nic>", where, &pci);
  } else if (cls.rfind("0x0604", 0) == 0 || pci.count("pci") > 0) {
    // AWS files list some bridges by busid alone: NCCL reads the rest from the machine; here
    // they take NCCL's fallback (8 GT/s rate, x16).
    const bool bare = !pci.get_optional<std::string>("<xmlattr>.link_speed");
    const LinkSpec link = bare ? fallback_link() : pcie_link(pci, where);
    // Named in order of appearance ("pcie0", ...) so drawings stay narrow; the busid is in
    // errors.
    const VertexId sw =
        builder_.add_switch(VertexKind::pcie_switch, "pcie" + std::to_string(bridges_++), 0);
    builder_.connect(sw, parent, link);
    add_children(pci, sw, where, depth + 1, numa, &pci);
  } else if (is_gpu_class(cls)) {
    add_gpu(nullptr, pci, busid, parent, where, numa);
  } else if (is_nic_class(cls)) {
    add_pci_nic(pci, parent, where);
  } else if (cls.empty()) {
    ++unknown_devices_;
    bare_.push_back({&pci, parent, depth > 1, busid, where, numa});
  }
}

// `gpu` is the <gpu> element, or nullptr for a GPU listed only as a PCI device (class 0x0302):
// then dev and rank are its order in the file, as NCCL numbers GPUs by PCI order.
void XmlImport::add_gpu(const ptree* gpu, const ptree& pci, const std::string& busid,
                        VertexId parent, const std::string& pci_where, int numa) {
  const std::string where = pci_where + (gpu != nullptr ? " <gpu>" : "");
  const int order = static_cast<int>(gpus_.size());
  if (order >= limits::max_gpus) fail(where, "more GPUs than the cap");
  const int dev = gpu ? required_int(*gpu, where, "dev", 0, limits::max_gpus - 1) : order;
  const int sm = gpu ? required_int(*gpu, where, "sm", 0, 100000) : 0;
  const int rank = gpu ? required_int(*gpu, where, "rank", 0, limits::max_gpus - 1) : order;
  if (gpu == nullptr) ++pci_only_gpus_;
  const VertexId v = add_gpu_vertex(dev, rank, parent, pcie_link(pci, pci_where));
  const GpuModel* model = gpu_model_by_pci_id(pci.get<std::string>("<xmlattr>.vendor", ""),
                                              pci.get<std::string>("<xmlattr>.device", ""));
  GpuEntry entry{v, busid, where, dev, sm, numa, model, {}};
  if (gpu != nullptr) {
    for (const auto& [tag, child] : *gpu) {
      if (tag == "nvlink") entry.nvlinks.push_back(&child);
    }
  }
  gpus_.push_back(std::move(entry));
}

// GPU `dev` under `parent`; the generation its PCIe link runs at raises the system's.
VertexId XmlImport::add_gpu_vertex(int dev, int rank, VertexId parent, const LinkSpec& link) {
  for (int gen = 1; gen <= 6; ++gen) {
    if (pcie_bandwidth_gbps(gen, link.lanes) == link.bandwidth_gbps) {
      max_pcie_gen_ = std::max(max_pcie_gen_, gen);
    }
  }
  const VertexId v = builder_.add_vertex({.kind = VertexKind::gpu,
                                          .name = "gpu" + std::to_string(dev),
                                          .node = 0,
                                          .rank = rank,
                                          .local_index = dev});
  builder_.connect(v, parent, link);
  return v;
}

VertexId XmlImport::add_nic_vertex(int dev, double port_gbps, VertexId parent,
                                   const LinkSpec& link) {
  std::string name = "nic" + std::to_string(dev);
  for (int k = dev + 1; nic_names_.count(name) > 0; ++k) name = "nic" + std::to_string(k);
  nic_names_.insert(name);
  const VertexId v = builder_.add_vertex({.kind = VertexKind::nic,
                                          .name = name,
                                          .node = 0,
                                          .local_index = dev,
                                          .port_bandwidth_gbps = port_gbps});
  builder_.connect(v, parent, link);
  ++nics_;
  return v;
}

// `where` names the <nic> element, `pci_where` the <pci> whose link it uses (when pci is set).
void XmlImport::add_nic(const ptree& nic, VertexId parent, const std::string& where,
                        const std::string& pci_where, const ptree* pci) {
  for (const auto& [tag, net] : nic) {
    if (tag != "net") continue;
    const std::string name = required(net, where + " <net>", "name");
    const std::string net_where = where + " <net name=" + input::echo(name) + ">";
    const int dev = required_int(net, net_where, "dev", 0, limits::max_vertices - 1);
    // Mb/s; 8 Mb/s is limits::min_bandwidth_gbps (1 MB/s), 2^31-1 Mb/s about 268 GB/s.
    const int speed_mbps = required_int(net, net_where, "speed", 8, INT32_MAX);
    const double port_gbps = speed_mbps / 8000.0;
    const LinkSpec link = pci != nullptr ? pcie_link(*pci, pci_where)
                                         : LinkSpec{.type = LinkType::pcie,
                                                    .bandwidth_gbps = port_gbps,
                                                    .latency_us = PresetLatencies::pcie_us};
    add_nic_vertex(dev, port_gbps, parent, link);
  }
}

// A NIC listed only as a PCI device (class 0x02xxxx): rate from --nic-gbps, its PCI id, or its
// PCIe link (counted for a warning).
void XmlImport::add_pci_nic(const ptree& pci, VertexId parent, const std::string& where) {
  const LinkSpec link = pcie_link(pci, where);
  double gbps = hints_.nic_gbps / 8.0;
  if (gbps == 0) {
    gbps = nic_gbps_by_pci_id(pci.get<std::string>("<xmlattr>.vendor", ""),
                              pci.get<std::string>("<xmlattr>.device", "")) /
           8.0;
  }
  if (gbps == 0) {
    gbps = link.bandwidth_gbps;
    ++nics_at_pcie_rate_;
  }
  add_nic_vertex(nics_, gbps, parent, link);
}

}  // namespace twinccl::topo::nccl_xml

namespace twinccl::topo {

NcclXmlImport import_nccl_xml(std::string_view text, std::string_view source,
                              const NcclXmlHints& hints) {
  const std::string src(source);
  input::check_xml_shape(text, src);
  boost::property_tree::ptree doc;
  try {
    std::istringstream in{std::string(text)};
    boost::property_tree::read_xml(in, doc);
  } catch (const boost::property_tree::xml_parser_error& e) {
    throw ConfigError(src + ":" + std::to_string(e.line()) +
                      ": malformed XML: " + e.message().substr(0, limits::max_echo_bytes));
  }
  try {
    return nccl_xml::XmlImport(src, hints).run(doc);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    if (what.rfind(src + ":", 0) == 0) throw;
    throw ConfigError(src + ": " + what);
  } catch (const boost::property_tree::ptree_error& e) {  // a check missed above
    throw ConfigError(src + ": unexpected XML content: " +
                      std::string(e.what()).substr(0, limits::max_echo_bytes));
  }
}

NcclXmlImport load_nccl_xml(const std::filesystem::path& path, const NcclXmlHints& hints) {
  return import_nccl_xml(read_input_file("NCCL topology file", path, limits::max_file_bytes),
                         path.string(), hints);
}

Topology topology_from_nccl_xml(std::string_view text, std::string_view source) {
  return import_nccl_xml(text, source, {}).topology;
}

Topology load_nccl_xml(const std::filesystem::path& path) {
  return load_nccl_xml(path, NcclXmlHints{}).topology;
}

Topology load_topology(std::string_view preset_or_path, const NcclXmlHints& hints) {
  if (hints.empty()) return load_topology(preset_or_path);
  const std::string name(preset_or_path);
  if (name.size() < 4 || lowercase_ascii(name.substr(name.size() - 4)) != ".xml") {
    throw InvalidArgument(
        "--gpu/--nvlink/--nic-gbps/--gpu-count/--nic-count/--nodes describe an "
        "NCCL topology XML file; " +
        input::echo(name) +
        " is not one (presets and JSON files say it all: h100-cluster-N for "
        "DGX H100 nodes)");
  }
  Topology node = load_nccl_xml(name, hints).topology;
  return hints.nodes > 1 ? rail_cluster(node, hints.nodes) : node;
}

}  // namespace twinccl::topo
