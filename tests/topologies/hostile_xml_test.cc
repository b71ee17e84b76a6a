// Hostile NCCL topology XML (issue 9): deep nesting, deep bridge chains, integer overflow, huge
// attributes and thousands of CPUs each end in a bounded ConfigError naming the file and element.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

std::string error_of(const std::string& xml) {
  try {
    topology_from_nccl_xml(xml, "h.xml");
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kGpu =
    R"(<pci busid="0000:10:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">)"
    R"(<gpu dev="0" sm="80" rank="0"/></pci>)";

// `depth` PCIe bridges, one inside the other, with `inner` at the bottom.
std::string bridge_chain(int depth, const std::string& inner) {
  std::string xml = R"(<system version="1"><cpu numaid="0">)";
  for (int i = 0; i < depth; ++i) {
    xml += R"(<pci busid="b)" + std::to_string(i) +
           R"(" class="0x060400" link_speed="16 GT/s" link_width="16">)";
  }
  xml += inner;
  for (int i = 0; i < depth; ++i) xml += "</pci>";
  return xml + "</cpu></system>";
}

}  // namespace

TEST_CASE("hostile XML: deep nesting is refused before parsing", "[topologies][xml][hostile]") {
  std::string deep = "<system version=\"1\">\n";
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  const std::string e = error_of(deep);
  CHECK_THAT(e, Contains("h.xml:2: nested deeper than 64 levels (the cap on XML elements)"));
  // Comments, CDATA, self-closing elements and quoted '>' do not count as nesting.
  std::string flat = R"(<system version="1"><!-- <a><b><c> -->)";
  for (int i = 0; i < 1000; ++i) flat += R"(<x a="<y>"/><![CDATA[<z>]]>)";
  CHECK_THAT(error_of(flat + "</system>"), Contains("no <gpu> element"));
}

TEST_CASE("hostile XML: the nesting scan reads markup as the parser does",
          "[topologies][xml][hostile]") {
  // Found by the fuzz driver (stack overflow in rapidxml): a quote inside an element name is part
  // of the name, not the start of an attribute value hiding the next tags.
  std::string quoted = "<system version=\"1\">";
  for (int i = 0; i < 10; ++i) {
    quoted += "<a\"x>";
    for (int k = 0; k < 100; ++k) quoted += "<b>";
    quoted += "<c\"y>";
  }
  CHECK_THAT(error_of(quoted), Contains("nested deeper than 64"));
  // '>' inside a DOCTYPE's [...] does not end it, so the closing tags in there do not count.
  std::string doctype = "<system version=\"1\">";
  for (int i = 0; i < 60; ++i) doctype += "<a>";
  doctype += "<!DOCTYPE x [ ";
  for (int i = 0; i < 60; ++i) doctype += "</a>";
  doctype += " ]>";
  for (int i = 0; i < 60; ++i) doctype += "<a>";
  CHECK_THAT(error_of(doctype), Contains("nested deeper than 64"));
  // Attribute values may hold '>' and quotes of the other kind.
  std::string values = "<system version=\"1\">";
  for (int i = 0; i < 100; ++i) values += R"(<a x='">' y = "'>" />)";
  CHECK_THAT(error_of(values + "</system>"), Contains("no <gpu> element"));
}

TEST_CASE("hostile XML: a deep PCI bridge chain", "[topologies][xml][hostile]") {
  CHECK_THAT(error_of(bridge_chain(20000, kGpu)), Contains("h.xml:1: nested deeper than 64"));
  // Within the cap it imports, and a location deep in the chain stays short.
  const Topology t = topology_from_nccl_xml(bridge_chain(50, kGpu), "h.xml");
  CHECK(t.gpu_count() == 1);
  const std::string bad = kGpu.substr(0, kGpu.find("rank=")) + R"(rank="x"/></pci>)";
  const std::string e = error_of(bridge_chain(50, bad));
  CHECK_THAT(e, Contains("h.xml: <cpu numaid=\"0\"> ... <pci busid=\"0000:10:00.0\"> <gpu>: "
                         "attribute 'rank' must be an integer, got \"x\""));
  CHECK(e.size() < 300);
}

TEST_CASE("hostile XML: integer attributes are range-checked", "[topologies][xml][hostile]") {
  const std::string nvswitch_gpu =
      R"(<pci busid="0000:10:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">)"
      R"(<gpu dev="0" sm="80" rank="0"><nvlink target="0000:c3:00.0" count="2147483647" )"
      R"(tclass="0x068000"/></gpu></pci>)";
  CHECK_THAT(error_of(bridge_chain(1, nvswitch_gpu)),
             Contains("<nvlink target=\"0000:c3:00.0\">: attribute 'count' must be in 1..1024, "
                      "got 2147483647"));
  std::string many = nvswitch_gpu;
  const std::string link = R"(<nvlink target="0000:c3:00.0" count="1000" tclass="0x068000"/>)";
  many.insert(many.find("</gpu>"), link + link);
  CHECK_THAT(error_of(bridge_chain(1, many.replace(many.find("2147483647"), 10, "1000"))),
             Contains("NVLinks to NVSwitches add up to more than 1024"));
  CHECK_THAT(error_of(bridge_chain(
                 1, kGpu.substr(0, kGpu.find("rank=")) + R"(rank="99999999999"/></pci>)")),
             Contains("attribute 'rank' must be in 0..1048575, got 99999999999"));
  const std::string nic = R"(<nic><net name="mlx5_0" dev="0" speed="0x7fffffffffff"/></nic>)";
  CHECK_THAT(error_of(bridge_chain(1, kGpu + nic)),
             Contains("<net name=\"mlx5_0\">: attribute 'speed' must be in 8..2147483647"));
}

TEST_CASE("hostile XML: a 10 MB attribute is not echoed", "[topologies][xml][hostile]") {
  std::string gpu = kGpu;
  gpu.replace(gpu.find("16 GT/s"), 7, std::string(10'000'000, 'A'));
  const std::string e = error_of(bridge_chain(1, gpu));
  CHECK_THAT(e, Contains("h.xml:") && Contains("link_speed \"AAA") &&
                    Contains("(10000000 bytes) is not a PCIe speed"));
  CHECK(e.size() < 600);
  // A huge busid in the location of a later error.
  std::string busid = kGpu;
  busid.replace(busid.find("0000:10:00.0"), 12, std::string(10'000'000, 'B'));
  busid.replace(busid.find(" rank=\"0\""), 9, "");
  const std::string located = error_of(bridge_chain(1, busid));
  CHECK_THAT(located, Contains("(10000000 bytes)") && Contains("missing attribute 'rank'"));
  CHECK(located.size() < 600);
}

TEST_CASE("hostile XML: thousands of CPUs are refused, not joined pairwise",
          "[topologies][xml][hostile]") {
  const auto start = std::chrono::steady_clock::now();
  std::string xml = R"(<system version="1">)";
  for (int i = 0; i < 100000; ++i) xml += "<cpu numaid=\"" + std::to_string(i % 4000) + "\"/>";
  CHECK_THAT(error_of(xml + "</system>"), Contains("more than 256 <cpu> elements (the cap"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}
