// NCCL_TOPO_FILE XML import: the sample file, NVLink variants, and malformed inputs.
#include <catch2/catch.hpp>

#include "test_paths.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

std::string error_of(const std::string& xml) {
  try {
    topology_from_nccl_xml(xml, "n.xml");
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// One CPU, a PCIe switch, `gpus` (each a <pci><gpu> string) and one NIC.
std::string system_with(const std::string& gpus, const std::string& nic = "") {
  return R"(<system version="1"><cpu numaid="0" arch="x86_64" affinity="ff">
      <pci busid="0000:01:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">)" +
         gpus + nic + "</pci></cpu></system>";
}

std::string gpu(int dev, int sm, const std::string& nvlinks = "",
                const std::string& pci_attrs = R"(link_speed="32.0 GT/s PCIe" link_width="16")") {
  return "<pci busid=\"0000:1" + std::to_string(dev) + ":00.0\" class=\"0x030200\" " + pci_attrs +
         "><gpu dev=\"" + std::to_string(dev) + "\" sm=\"" + std::to_string(sm) + "\" rank=\"" +
         std::to_string(dev) + "\" gdr=\"1\">" + nvlinks + "</gpu></pci>";
}

}  // namespace

TEST_CASE("sample DGX A100 NCCL XML imports", "[topologies][xml]") {
  const Topology t = load_topology(testing::example_path("dgx-a100-nccl-topo.xml").string());
  const TopologySummary s = t.summary();
  CHECK(s.name == "dgx-a100-nccl-topo");
  CHECK(s.gpus == 8);
  CHECK(s.nodes == 1);
  CHECK(s.arch == GpuArch::ampere);
  CHECK(s.nvswitches_per_node == 6);
  CHECK(s.nvlinks_per_gpu == 12);
  CHECK(s.nvlink_link_bandwidth_gbps == Approx(20.0));
  CHECK(s.nvlink_bandwidth_gbps == Approx(240.0));
  CHECK_FALSE(s.nvls_capable);
  CHECK(s.pcie_gen == 4);
  CHECK(s.pcie_bandwidth_gbps == Approx(24.0));
  CHECK(s.nics_per_node == 8);
  CHECK(s.nic_bandwidth_gbps == Approx(25.0));
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      const RouteMetrics m = measure(t, t.route(a, b));
      CHECK(m.hops == 2);
      CHECK(m.bottleneck_bandwidth_gbps == Approx(240.0));
    }
  }
  CHECK(t.vertex(*t.home_nic(5)).name == "nic5");
  CHECK(t.vertex(t.gpu(3)).local_index == 3);
}

TEST_CASE("direct GPU-GPU NVLinks are added once, Hopper with NVSwitch is NVLS capable",
          "[topologies][xml]") {
  const std::string pair =
      gpu(0, 90, R"(<nvlink target="0000:11:00.0" count="4" tclass="0x030200"/>)") +
      gpu(1, 90, R"(<nvlink target="0000:10:00.0" count="4" tclass="0x030200"/>)");
  const Topology t = topology_from_nccl_xml(system_with(pair), "p.xml");
  CHECK(t.gpu_count() == 2);
  const RouteMetrics m = measure(t, t.route(0, 1));
  CHECK(m.hops == 1);
  CHECK(m.bottleneck_bandwidth_gbps == Approx(4 * 20.6));
  CHECK(t.summary().arch == GpuArch::hopper);
  CHECK(t.summary().pcie_gen == 5);
  CHECK_FALSE(t.summary().nvls_capable);

  const std::string sw = R"(<nvlink target="0000:c0:00.0" count="18" tclass="0x068000"/>)";
  const Topology h = topology_from_nccl_xml(system_with(gpu(0, 90, sw) + gpu(1, 90, sw)), "h.xml");
  CHECK(h.summary().nvls_capable);
  CHECK(h.summary().nvlink_bandwidth_gbps == Approx(370.8));
  const Topology b =
      topology_from_nccl_xml(system_with(gpu(0, 100, sw) + gpu(1, 100, sw)), "b.xml");
  CHECK(b.summary().arch == GpuArch::blackwell);
  CHECK(b.summary().nvlink_link_bandwidth_gbps == Approx(40.1));
}

TEST_CASE("NICs: speed in Mb/s, under a pci or straight under the cpu", "[topologies][xml]") {
  const std::string nic =
      R"(<pci busid="0000:20:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/></nic></pci>)";
  const Topology t = topology_from_nccl_xml(system_with(gpu(0, 90), nic), "n.xml");
  CHECK(t.summary().nics_per_node == 1);
  CHECK(t.summary().nic_bandwidth_gbps == Approx(50.0));
  CHECK(t.home_nic(0).has_value());
}

TEST_CASE("malformed NCCL XML names the element and attribute", "[topologies][xml]") {
  CHECK_THAT(error_of("<system version=\"1\"><cpu numaid=\"0\">"),
             Contains("n.xml") && Contains("malformed XML"));
  CHECK_THAT(error_of("<system version=\"1\">\n<cpu numaid=\"0\">\n<gpu dev=\"0 "
                      "sm=\"80\"/>\n</cpu>\n</system>"),
             Contains("n.xml:") && Contains("malformed XML"));
  CHECK_THAT(error_of("<system version=\"1\">\n<cpu numaid=\"0\">\n<pci busid=\"0000:01:00.0\" "
                      "<gpu/>\n</cpu></system>"),
             Contains("n.xml:3: malformed XML"));
  CHECK_THAT(error_of("<topology/>"), Contains("missing root element <system"));
  CHECK_THAT(error_of("<system><cpu numaid=\"0\"/></system>"),
             Contains("<system>: missing attribute 'version'"));
  CHECK_THAT(error_of("<system version=\"1\"><cpu numaid=\"0\"/></system>"), Contains("no <gpu>"));
  CHECK_THAT(error_of("<system version=\"1\"><cpu arch=\"x86_64\"/></system>"),
             Contains("<cpu>: missing attribute 'numaid'"));
  const std::string no_sm =
      R"(<pci busid="0000:10:00.0" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" rank="0"/></pci>)";
  CHECK_THAT(error_of(system_with(no_sm)),
             Contains("<pci busid=\"0000:10:00.0\"> <gpu>: missing attribute 'sm'"));
  CHECK_THAT(error_of(system_with(gpu(0, 90, "", R"(link_width="16")"))),
             Contains("<pci busid=\"0000:10:00.0\">: missing attribute 'link_speed'"));
  CHECK_THAT(error_of(system_with(gpu(0, 90, "", R"(link_speed="7 GT/s" link_width="16")"))),
             Contains("link_speed \"7 GT/s\" is not a PCIe speed"));
  CHECK_THAT(error_of(system_with(gpu(0, 90, "", R"(link_speed="16 GT/s" link_width="x16")"))),
             Contains("attribute 'link_width' must be an integer, got \"x16\""));
  CHECK_THAT(error_of(system_with(
                 gpu(0, 90, R"(<nvlink target="0000:99:00.0" count="2" tclass="0x030200"/>)"))),
             Contains("<nvlink target=\"0000:99:00.0\">") && Contains("neither a GPU busid"));
  CHECK_THAT(error_of(system_with(gpu(0, 90, R"(<nvlink count="2"/>)"))),
             Contains("<nvlink>: missing attribute 'target'"));
  CHECK_THAT(error_of(system_with(gpu(0, 90) + gpu(1, 80))), Contains("sm=80 differs"));
  const std::string bad_net =
      R"(<pci busid="0000:20:00.0" link_speed="16 GT/s" link_width="16"><nic><net name="mlx5_0" dev="0"/></nic></pci>)";
  CHECK_THAT(error_of(system_with(gpu(0, 90), bad_net)),
             Contains("<net name=\"mlx5_0\">: missing attribute 'speed'"));
  const std::string same_rank =
      gpu(0, 90) +
      R"(<pci busid="0000:30:00.0" link_speed="16 GT/s" link_width="16"><gpu dev="1" sm="90" rank="0"/></pci>)";
  CHECK_THAT(error_of(system_with(same_rank)),
             Contains("n.xml") && Contains("rank 0 already belongs"));
}
