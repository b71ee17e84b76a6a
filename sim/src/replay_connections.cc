// The connections of trace replay: numbering and posting (replay_connections.h says how).
#include "replay_connections.h"

#include <map>
#include <tuple>

namespace twinccl::sim::detail {

ReplayConnections::ReplayConnections(const ReplayProgram& program) : p_(program) {
  std::map<std::tuple<int, int, int>, int> ids;  // (route, sending member, receiving member)
  connection_of_.resize(p_.flow.transfers.size());
  for (std::size_t t = 0; t < p_.flow.transfers.size(); ++t) {
    const auto& [from, to] = p_.transfer_members[t];
    const auto it =
        ids.try_emplace({p_.flow.transfers[t].route, from, to}, static_cast<int>(ids.size())).first;
    connection_of_[t] = it->second;
  }
  connections_.resize(ids.size());
}

bool ReplayConnections::post(int t) {
  Connection& c = connections_[connection_of_[static_cast<std::size_t>(t)]];
  const int step = step_of(t);
  if (c.active == 0 || (c.active_step == step && c.waiting.empty())) {
    c.active_step = step;
    ++c.active;
    return true;
  }
  c.waiting.push_back(t);
  return false;
}

}  // namespace twinccl::sim::detail
