// Internal to the NCCL XML importer: the import state shared by the PCI walk (nccl_xml.cc) and
// the GPU models and NVLink fabric (nccl_xml_fabric.cc). See nccl_xml.cc for how it works.
#pragma once

#include <boost/property_tree/ptree.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nccl_xml_devices.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/nccl_xml_hints.h"

namespace twinccl::topo::nccl_xml {

using boost::property_tree::ptree;

struct GpuEntry {
  VertexId vertex;
  std::string busid, where;
  int dev, sm, numa;      // sm 0: a PCI-only GPU whose model comes from its id or the hints
  const GpuModel* model;  // from the PCI id; nullptr when the file does not say
  std::vector<const ptree*> nvlinks;
};

// A <pci> with a busid and nothing else (AWS g5, p5 2023): a slot NCCL fills from the machine.
struct BareDevice {
  const ptree* pci;
  VertexId parent;
  bool under_switch;  // its parent is a PCIe switch (else a <cpu>)
  std::string busid, where;
  int numa;
};

class XmlImport {
 public:
  XmlImport(std::string source, const NcclXmlHints& hints);
  NcclXmlImport run(const ptree& doc);

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) const;
  std::string required(const ptree& node, const std::string& where, const std::string& attr) const;
  int required_int(const ptree& node, const std::string& where, const std::string& attr, int lo,
                   int hi) const;
  LinkSpec pcie_link(const ptree& pci, const std::string& where);
  void add_cpu(const ptree& cpu);
  void add_children(const ptree& parent, VertexId parent_vertex, const std::string& where,
                    int depth, int numa, const ptree* parent_pci);
  void add_pci(const ptree& pci, VertexId parent, const std::string& parent_where, int depth,
               int numa);
  void add_gpu(const ptree* gpu, const ptree& pci, const std::string& busid, VertexId parent,
               const std::string& pci_where, int numa);
  void add_nic(const ptree& nic, VertexId parent, const std::string& where,
               const std::string& pci_where, const ptree* pci);
  void add_pci_nic(const ptree& pci, VertexId parent, const std::string& where);
  VertexId add_gpu_vertex(int dev, int rank, VertexId parent, const LinkSpec& link);
  VertexId add_nic_vertex(int dev, double port_gbps, VertexId parent, const LinkSpec& link);
  void fail_without_gpus() const;
  LinkSpec fallback_link() const;  // NCCL's fallback for a <pci> without link attributes

  // nccl_xml_bare.cc
  void place_bare_devices();
  void add_slot_gpu(VertexId parent, const LinkSpec& link, const std::string& busid,
                    const std::string& where, int numa);

  // nccl_xml_fabric.cc
  void resolve_models();
  void add_nvlinks();
  void add_model_fabric();
  void warn_missing_nvlink();

  std::string source_;
  NcclXmlHints hints_;
  const GpuModel* hinted_ = nullptr;  // hints_.gpu's model
  TopologyBuilder builder_;
  std::map<int, VertexId> cpus_;
  std::vector<GpuEntry> gpus_;
  std::vector<BareDevice> bare_;
  std::set<std::string> switch_busids_;
  std::set<std::string> nic_names_;
  GpuArch arch_ = GpuArch::unknown;
  double nvlink_gbps_ = 0;           // per link, for the GPUs' sm or model
  const GpuModel* model_ = nullptr;  // the GPUs' model when known (hint or PCI id)
  int max_pcie_gen_ = 0;
  int nics_ = 0;
  int bridges_ = 0;
  int pci_only_gpus_ = 0;
  int unknown_devices_ = 0;  // <pci> leaves with neither class, <gpu> nor <nic>
  int nics_at_pcie_rate_ = 0;
  int empty_link_speeds_ = 0;
  std::vector<std::string> warnings_, notes_;
};

}  // namespace twinccl::topo::nccl_xml
