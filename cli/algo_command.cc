// `twinccl algo [collective]`: the algorithm registry, one line per algorithm.
#include <fmt/format.h>

#include <ostream>

#include "commands.h"
#include "twinccl/algorithm_defaults.h"
#include "twinccl/algorithms.h"
#include "twinccl/op_traits.h"

namespace twinccl::cli {

CLI::App* add_algo_command(CLI::App& app, AlgoOptions& o) {
  CLI::App* cmd = app.add_subcommand("algo", "list the algorithms of each collective");
  cmd->add_option("collective", o.collective, "one collective (default: all)");
  return cmd;
}

int run_algo_command(const AlgoOptions& o, std::ostream& out) {
  std::vector<OpKind> kinds;
  if (!o.collective.empty()) {
    kinds.push_back(parse_op_kind(o.collective));
  } else {
    for (const OpTraits& t : all_op_traits()) {  // every collective (send/recv have none)
      if (!t.p2p && t.kind != OpKind::barrier) kinds.push_back(t.kind);
    }
  }
  print_algorithms(out, kinds);
  return 0;
}

void print_algorithms(std::ostream& out, const std::vector<OpKind>& kinds) {
  for (OpKind k : kinds) {
    out << name(k) << ":\n";
    for (const Algorithm* a : algorithms_for(k)) {
      out << fmt::format("  {:<18} {}{}\n", a->name(), a->description(),
                         is_default_algorithm(k, a->name()) ? "  [default]" : "");
    }
  }
}

}  // namespace twinccl::cli
