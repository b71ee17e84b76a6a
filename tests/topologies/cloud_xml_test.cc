// Published cloud NCCL topology files (topologies/examples/nccl-xml/, sources in SOURCES.md):
// each imports (with the one hint a partial file needs) with its GPU, NVLink, NVSwitch and NIC
// counts; partial-file messages name the hint; NCCL's defaults (empty link_speed, link_width 0,
// NVLink to itself, NVSwitch placeholder targets) and the missing-NVLink warning.
#include <catch2/catch.hpp>

#include "test_paths.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

NcclXmlImport corpus(const std::string& file, NcclXmlHints hints = {}) {
  return load_nccl_xml(testing::example_path("nccl-xml/" + file), hints);
}

std::string error_of(const std::string& file, NcclXmlHints hints = {}) {
  try {
    corpus(file, hints);
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

struct Expect {
  int gpus, nvlinks_per_gpu, nvswitches, nics;
  double nvlink_gbps, nic_gbps, pcie_gbps;
};

void check_counts(const Topology& t, const Expect& e) {
  const TopologySummary s = t.summary();
  CHECK(s.gpus == e.gpus);
  CHECK(s.nvlinks_per_gpu == e.nvlinks_per_gpu);
  CHECK(s.nvswitches_per_node == e.nvswitches);
  CHECK(s.nics_per_node == e.nics);
  CHECK(s.nvlink_bandwidth_gbps == Approx(e.nvlink_gbps));
  CHECK(s.nic_bandwidth_gbps == Approx(e.nic_gbps));
  CHECK(s.pcie_bandwidth_gbps == Approx(e.pcie_gbps));
}

}  // namespace

TEST_CASE("Azure ND A100 v4: PCI-only file needs --gpu, imports as 8 A100 on NVSwitch",
          "[topologies][xml][cloud]") {
  CHECK_THAT(error_of("azure-ndv4-topo.xml"), Contains("8 GPU(s) are listed only as PCI devices") &&
                                                  Contains("--gpu MODEL") && Contains("a100"));
  const NcclXmlImport r = corpus("azure-ndv4-topo.xml", {.gpu = "a100"});
  check_counts(r.topology, {8, 12, 6, 8, 240.0, 24.0, 24.0});
  CHECK(r.topology.summary().arch == GpuArch::ampere);
  CHECK(mentions(r.warnings, "8 NIC(s) have no rate"));
  CHECK(mentions(r.notes, "one NVSwitch fabric"));
  // The NIC rate hint replaces the PCIe guess and its warning.
  const NcclXmlImport hinted = corpus("azure-ndv4-topo.xml", {.gpu = "a100", .nic_gbps = 200});
  CHECK(hinted.topology.summary().nic_bandwidth_gbps == Approx(25.0));
  CHECK(hinted.warnings.empty());
}

TEST_CASE("Azure ND H100 v5: --gpu h100 gives 8 H100, 18 NVLinks each, NVSwitch, 8 NICs",
          "[topologies][xml][cloud]") {
  CHECK_THAT(error_of("azure-ndv5-topo.xml"), Contains("--gpu MODEL"));
  const NcclXmlImport r = corpus("azure-ndv5-topo.xml", {.gpu = "h100", .nic_gbps = 400});
  check_counts(r.topology, {8, 18, 4, 8, 370.8, 50.0, 48.0});
  CHECK(r.topology.summary().nvls_capable);
  // --nvlink none: the user says there is none; PCIe only, no warning about it.
  const NcclXmlImport none =
      corpus("azure-ndv5-topo.xml", {.gpu = "h100", .nvlink = NvlinkHint::none, .nic_gbps = 400});
  CHECK(none.topology.summary().nvlinks_per_gpu == 0);
  CHECK(none.warnings.empty());
}

TEST_CASE("Azure ND v2: --gpu v100 gives 8 V100 SXM2 on the DGX-1 hybrid cube-mesh",
          "[topologies][xml][cloud]") {
  const NcclXmlImport r = corpus("azure-ndv2-topo.xml", {.gpu = "v100"});
  check_counts(r.topology, {8, 6, 0, 1, 120.0, 24.0, 24.0});
  int nvlink_pairs = 0;
  for (const Link& l : r.topology.links()) nvlink_pairs += l.type == LinkType::nvlink ? 1 : 0;
  CHECK(nvlink_pairs == 16);  // 4 per GPU, 8 GPUs, each pair counted once
  CHECK(mentions(r.notes, "hybrid cube-mesh"));
}

TEST_CASE("Azure NC A100 v4: imports without hints (PCI id 0x20b5, NCCL's defaults)",
          "[topologies][xml][cloud]") {
  const NcclXmlImport r = corpus("azure-ncv4-topo.xml");
  // link_speed="" is NCCL's 8 GT/s fallback and link_width="0" reads 16: 12 GB/s.
  check_counts(r.topology, {4, 0, 0, 1, 0.0, 12.5, 12.0});
  CHECK(mentions(r.notes, "A100 PCIe"));
  CHECK(mentions(r.notes, "target is its own GPU: ignored"));
  CHECK(r.warnings.empty());
}

TEST_CASE("AWS p4d and p4de: no hint (A100 SXM4 and EFA PCI ids), NVSwitch from the model",
          "[topologies][xml][cloud]") {
  const NcclXmlImport p4d = corpus("aws-p4d-24xl-topo.xml");
  check_counts(p4d.topology, {8, 12, 6, 4, 240.0, 12.5, 12.0});
  CHECK(p4d.warnings.empty());
  const NcclXmlImport p4de = corpus("aws-p4de-24xl-topo.xml");
  check_counts(p4de.topology, {8, 12, 6, 4, 240.0, 12.5, 12.0});
  CHECK(p4de.warnings.empty());
  CHECK(mentions(p4de.notes, "from the PCI device id"));
}

TEST_CASE("AWS p5: <gpu sm=90> without <nvlink> warns, --gpu h100 adds the NVSwitch",
          "[topologies][xml][cloud]") {
  const NcclXmlImport plain = corpus("aws-p5.48xl-topo.xml");
  CHECK(plain.topology.summary().nvlinks_per_gpu == 0);
  CHECK(mentions(plain.warnings, "show no NVLink"));
  CHECK(mentions(plain.warnings, "h100"));
  const NcclXmlImport r = corpus("aws-p5.48xl-topo.xml", {.gpu = "h100"});
  check_counts(r.topology, {8, 18, 4, 32, 370.8, 12.5, 48.0});
  CHECK(r.warnings.empty());
  CHECK_THAT(error_of("aws-p5.48xl-topo.xml", {.gpu = "a100"}),
             Contains("sm=90 contradicts --gpu a100 (sm 80)"));
}

TEST_CASE(
    "AWS g5: bare busids need --gpu, --gpu-count, --nic-count, the error names the missing ones",
    "[topologies][xml][cloud]") {
  const std::string none = error_of("aws-g5.48xl-topo.xml");
  CHECK_THAT(none, Contains("9 <pci> device(s) carry only a busid") &&
                       Contains("--gpu MODEL, --gpu-count N, --nic-count M") &&
                       Contains("g5.48xlarge: --gpu a10g --gpu-count 8 --nic-count 1"));
  // Only what is still missing is named.
  const std::string some = error_of("aws-g5.48xl-topo.xml", {.gpu = "a10g", .gpu_count = 8});
  CHECK_THAT(some, Contains("with --nic-count M (") && !Contains("--gpu MODEL") &&
                       !Contains("--gpu-count N,"));
  const NcclXmlImport r = corpus("aws-g5.48xl-topo.xml",
                                 {.gpu = "a10g", .nic_gbps = 100, .gpu_count = 8, .nic_count = 1});
  // 8 A10G (PCIe, no NVLink) and one 100 Gb/s EFA; bare slots take NCCL's 8 GT/s x16 fallback.
  check_counts(r.topology, {8, 0, 0, 1, 0.0, 12.5, 12.0});
  CHECK(r.topology.summary().arch == GpuArch::ampere);
  CHECK(mentions(r.notes, "the first 8 taken as GPUs and the next 1 as NICs"));
  // The NIC is the last slot listed (busid 00:15.0), on the second <cpu>: GPUs 0-3 sit on cpu0.
  const auto nic = r.topology.find("nic0");
  REQUIRE(nic);
  const Link& up = r.topology.link(r.topology.links_of(*nic).front());
  CHECK(r.topology.vertex(r.topology.other_end(r.topology.links_of(*nic).front(), *nic)).name ==
        "cpu1");
  CHECK(up.bandwidth_gbps == Approx(12.0));
  // Counts that do not fit the 9 slots are refused with the counts.
  CHECK_THAT(error_of("aws-g5.48xl-topo.xml", {.gpu = "a10g", .gpu_count = 8, .nic_count = 2}),
             Contains("9 bare <pci> devices") && Contains("--gpu-count 8 and --nic-count 2"));
}

TEST_CASE("AWS p5 (2023 file): 32 bare NICs behind 8 PCIe switches, one H100 behind each",
          "[topologies][xml][cloud]") {
  CHECK_THAT(error_of("aws-p5.48xl-topo-2023.xml", {.gpu = "h100"}),
             Contains("32 <pci> device(s) carry only a busid") &&
                 Contains("--gpu-count N, --nic-count M") && !Contains("--gpu MODEL"));
  const NcclXmlImport r = corpus("aws-p5.48xl-topo-2023.xml",
                                 {.gpu = "h100", .nic_gbps = 100, .gpu_count = 8, .nic_count = 32});
  // H100 SXM5: NVSwitch from the model; each GPU on its switch's gen5 x16 link (48 GB/s).
  check_counts(r.topology, {8, 18, 4, 32, 370.8, 12.5, 48.0});
  CHECK(mentions(r.notes, "one behind each PCIe switch"));
  CHECK(r.warnings.empty());
  // GPU 0 shares its PCIe switch with NICs 0-3 (the file's first group).
  const auto gpu0 = r.topology.find("gpu0");
  REQUIRE(gpu0);
  VertexId sw = -1;
  for (LinkId l : r.topology.links_of(*gpu0)) {
    if (r.topology.link(l).type == LinkType::pcie) sw = r.topology.other_end(l, *gpu0);
  }
  REQUIRE(sw >= 0);
  CHECK(r.topology.vertex(sw).kind == VertexKind::pcie_switch);
  int nics_on_switch = 0;
  for (LinkId l : r.topology.links_of(sw)) {
    nics_on_switch +=
        r.topology.vertex(r.topology.other_end(l, sw)).kind == VertexKind::nic ? 1 : 0;
  }
  CHECK(nics_on_switch == 4);
  CHECK_THAT(
      error_of("aws-p5.48xl-topo-2023.xml", {.gpu = "h100", .gpu_count = 4, .nic_count = 32}),
      Contains("8 such switches, not --gpu-count 4"));
}

TEST_CASE("rail_cluster (--nodes N): N copies of one node's XML on a rail-optimized fat-tree",
          "[topologies][xml][cloud]") {
  const NcclXmlImport one = corpus("azure-ndv5-topo.xml", {.gpu = "h100", .nic_gbps = 400});
  const Topology four = rail_cluster(one.topology, 4);
  const TopologySummary s = four.summary();
  CHECK(s.nodes == 4);
  CHECK(s.gpus == 32);
  CHECK(s.nics_per_node == 8);
  CHECK(s.network_levels == 2);
  CHECK(s.nic_bandwidth_gbps == Approx(50.0));
  // Rank 8 is GPU 0 of node 1; its traffic to rank 0 leaves through a NIC and a leaf.
  CHECK(four.vertex(four.gpu(8)).node == 1);
  bool crosses_network = false;
  for (LinkId l : four.route(0, 8)) crosses_network |= four.link(l).type == LinkType::network;
  CHECK(crosses_network);
  const std::string path = testing::example_path("nccl-xml/azure-ndv5-topo.xml").string();
  CHECK(load_topology(path, NcclXmlHints{.gpu = "h100", .nic_gbps = 400, .nodes = 4}).gpu_count() ==
        32);
  CHECK_THROWS_WITH(rail_cluster(one.topology, 0), Contains("--nodes: must be in 1..1024"));
  CHECK_THROWS_WITH(rail_cluster(four, 2), Contains("one-node topology"));
  CHECK_THROWS_WITH(load_topology("dgx-h100", NcclXmlHints{.nodes = 2}),
                    Contains("h100-cluster-N"));
}

TEST_CASE("NCCL defaults and placeholders in hand-written XML", "[topologies][xml][cloud]") {
  const auto gpu = [](int i, const std::string& nvlinks) {
    return "<pci busid=\"0000:0" + std::to_string(i) +
           ":00.0\" class=\"0x030200\" "
           "link_speed=\"\" link_width=\"0\"><gpu dev=\"" +
           std::to_string(i) + "\" sm=\"90\" rank=\"" + std::to_string(i) + "\">" + nvlinks +
           "</gpu></pci>";
  };
  const std::string to_switch = R"(<nvlink target="fffffff:ff:ff.0" count="18"/>)";
  const std::string xml = "<system version=\"1\"><cpu numaid=\"-1\">" + gpu(0, to_switch) +
                          gpu(1, to_switch) + "</cpu></system>";
  const NcclXmlImport r = import_nccl_xml(xml, "d.xml", {});
  CHECK(r.topology.summary().nvswitches_per_node == 1);
  CHECK(r.topology.summary().nvlink_bandwidth_gbps == Approx(370.8));
  CHECK(r.topology.summary().pcie_bandwidth_gbps == Approx(12.0));
  // SXM-class sm with no NVLink at all: warned, not silent.
  const std::string bare =
      "<system version=\"1\"><cpu numaid=\"0\">" + gpu(0, "") + gpu(1, "") + "</cpu></system>";
  CHECK(mentions(import_nccl_xml(bare, "b.xml", {}).warnings, "show no NVLink"));
  CHECK(import_nccl_xml(bare, "b.xml", {.nvlink = NvlinkHint::none}).warnings.empty());
}

TEST_CASE("hints are checked", "[topologies][xml][cloud]") {
  CHECK_THROWS_WITH(corpus("azure-ndv4-topo.xml", {.gpu = "k80"}),
                    Contains("unknown GPU model \"k80\"") && Contains("h100"));
  CHECK_THROWS_WITH(corpus("azure-ndv4-topo.xml", {.gpu = "a100", .nic_gbps = -1}),
                    Contains("--nic-gbps"));
  CHECK_THROWS_WITH(load_topology("dgx-h100", NcclXmlHints{.gpu = "h100"}), Contains("not one"));
  CHECK_THROWS_WITH(parse_nvlink_hint("nvl"), Contains("switch, direct, none"));
  CHECK_THROWS_WITH(corpus("azure-ncv4-topo.xml", {.nvlink = NvlinkHint::nvswitch}),
                    Contains("have no NVLink"));
  CHECK(gpu_models().size() >= 10);
}
