// Attribute reading and element locations for the NCCL XML importer (nccl_xml_attributes.h).
#include "nccl_xml_attributes.h"

#include <stdexcept>

#include "input_checks.h"
#include "twinccl/errors.h"

namespace twinccl::topo::nccl_xml {

std::string attribute(const boost::property_tree::ptree& node, const std::string& where,
                      const std::string& attr, const std::string& source) {
  const auto v = node.get_optional<std::string>("<xmlattr>." + attr);
  if (!v) throw ConfigError(source + ": " + where + ": missing attribute '" + attr + "'");
  return *v;
}

int int_attribute(const boost::property_tree::ptree& node, const std::string& where,
                  const std::string& attr, int lo, int hi, const std::string& source) {
  const std::string text = attribute(node, where, attr, source);
  const std::string at = source + ": " + where + ": attribute '" + attr + "' must be ";
  long long value = 0;
  try {
    std::size_t used = 0;
    value = std::stoll(text, &used, 0);
    if (used != text.size()) throw std::invalid_argument(attr);
  } catch (const std::exception&) {
    throw ConfigError(at + "an integer, got " + input::echo(text));
  }
  if (value < lo || value > hi) {
    throw ConfigError(at + "in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                      std::to_string(value));
  }
  return static_cast<int>(value);
}

std::string nested(const std::string& parent_where, int depth, int numa,
                   const std::string& element) {
  if (depth < 3) return parent_where + " " + element;
  return "<cpu numaid=\"" + std::to_string(numa) + "\"> ... " + element;
}

}  // namespace twinccl::topo::nccl_xml
