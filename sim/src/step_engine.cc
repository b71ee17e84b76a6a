// The steps of flow playback and trace replay (step_engine.h says how).
#include "step_engine.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "twinccl/errors.h"

namespace twinccl::sim::detail {

StepConnections::StepConnections(const FlowProgram& program,
                                 const std::vector<std::pair<int, int>>& ends)
    : p_(program) {
  std::map<std::tuple<int, int, int>, int> ids;  // (route, sending unit, receiving unit)
  connection_of_.resize(p_.transfers.size());
  for (std::size_t t = 0; t < p_.transfers.size(); ++t) {
    const auto& [from, to] = ends[t];
    const auto it =
        ids.try_emplace({p_.transfers[t].route, from, to}, static_cast<int>(ids.size())).first;
    connection_of_[t] = it->second;
  }
  connections_.resize(ids.size());
}

bool StepConnections::post(int t) {
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

StepEngine::StepEngine(const FlowProgram& program, std::vector<const Steps*> unit_steps,
                       const std::vector<std::pair<int, int>>& ends, Hooks hooks)
    : p_(program),
      unit_steps_(std::move(unit_steps)),
      ends_(ends),
      hooks_(std::move(hooks)),
      connections_(program, ends) {
  const std::size_t units = unit_steps_.size();
  const std::size_t transfers = p_.transfers.size();
  step_.assign(units, 0);
  pending_.assign(units, 0);
  sends_open_.assign(units, 0);
  steps_passed_.assign(units, 0);
  transfer_done_.assign(transfers, 0);
  recv_step_.assign(transfers, 0);
  send_step_.assign(transfers, 0);
  ends_in_step_.assign(transfers, 0);
  for (const auto& [from, to] : ends_) {
    if (from < 0 || to < 0 || static_cast<std::size_t>(std::max(from, to)) >= units) {
      throw InternalError("step playback: a transfer from unit " + std::to_string(from) + " to " +
                          std::to_string(to) + " of " + std::to_string(units));
    }
  }
  for (std::size_t u = 0; u < units; ++u) {
    const Steps& steps = *unit_steps_[u];
    for (std::size_t s = 0; s < steps.size(); ++s) {
      for (int t : steps[s]) {
        if (is_receive(static_cast<int>(u), t)) recv_step_[static_cast<std::size_t>(t)] = s;
        if (ends_[static_cast<std::size_t>(t)].first == static_cast<int>(u)) {
          send_step_[static_cast<std::size_t>(t)] = s;
        }
      }
    }
  }
}

void StepEngine::enter_step(int unit, std::size_t step) {
  const auto u = static_cast<std::size_t>(unit);
  const Steps& steps = *unit_steps_[u];
  for (; step < steps.size(); ++step) {
    step_[u] = step;
    std::size_t waiting = 0;
    for (int t : steps[step]) {
      const auto ti = static_cast<std::size_t>(t);
      const bool grouped = p_.transfers[ti].grouped;
      if (grouped && !transfer_done_[ti]) ++waiting;
      if (ends_[ti].first == unit) {
        ++sends_open_[u];
        if (!grouped || ++ends_in_step_[ti] == 2) hooks_.post_after_delay(t);
      } else {
        if (!transfer_done_[ti] && !grouped) ++waiting;
        if (grouped && ++ends_in_step_[ti] == 2) hooks_.post_after_delay(t);
      }
    }
    pending_[u] = waiting;
    if (waiting > 0) return;
  }
  step_[u] = steps.size();
  steps_passed_[u] = 1;
  if (sends_open_[u] == 0 && hooks_.unit_done) hooks_.unit_done(unit);
}

// The unit leaves its step when t, held in its step step_of_t, was the last it waited for.
void StepEngine::release(int unit, std::size_t step_of_t) {
  const auto u = static_cast<std::size_t>(unit);
  if (step_[u] == step_of_t && pending_[u] > 0 && --pending_[u] == 0) {
    enter_step(unit, step_[u] + 1);
  }
}

void StepEngine::ended(int t) {
  const auto ti = static_cast<std::size_t>(t);
  transfer_done_[ti] = 1;
  connections_.ended(t, hooks_.launch);
  const auto [from, to] = ends_[ti];
  const auto fi = static_cast<std::size_t>(from);
  if (--sends_open_[fi] == 0 && steps_passed_[fi] && hooks_.unit_done) hooks_.unit_done(from);
  if (is_receive(to, t)) release(to, recv_step_[ti]);
  if (p_.transfers[ti].grouped) release(from, send_step_[ti]);
}

}  // namespace twinccl::sim::detail
