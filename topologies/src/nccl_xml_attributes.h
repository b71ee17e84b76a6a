// Internal to the NCCL XML importer: reading attributes with their checks, and naming where an
// element is. Errors are ConfigError "<source>: <where>: ...", values cut by input::echo.
#pragma once

#include <boost/property_tree/ptree.hpp>
#include <string>

#include "twinccl/ascii_case.h"  // lowercase_ascii: attribute values are matched case-blind

namespace twinccl::topo::nccl_xml {

// The attribute's text; ConfigError when it is missing.
std::string attribute(const boost::property_tree::ptree& node, const std::string& where,
                      const std::string& attr, const std::string& source);
// An integer attribute (decimal, or 0x hex as NCCL's strtol(.., 0) reads it) in lo..hi.
int int_attribute(const boost::property_tree::ptree& node, const std::string& where,
                  const std::string& attr, int lo, int hi, const std::string& source);

// Where an element is: its <cpu>, its parent and itself; from depth 3 on the chain between the
// <cpu> and the element is elided ("<cpu numaid="0"> ... <pci busid="...">"), so locations stay
// short in a deep bridge chain.
std::string nested(const std::string& parent_where, int depth, int numa,
                   const std::string& element);

}  // namespace twinccl::topo::nccl_xml
