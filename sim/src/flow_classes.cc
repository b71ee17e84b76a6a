// Flow classes of one round: the coarsest partition of a round's flows and link resources in
// which every flow of a class sees the same links and every link of a class carries the same
// flows (an equitable partition), so SimGrid's max-min sharing gives every flow of a class the
// same rate at every instant (flow_fluid.cc plays the classes instead of the flows).
//
// How it works. First, transfers of the round on the same route with the same bytes and delay are
// one flow of multiplicity m (a direct all_to_all on 8 channels: the 8 channel pieces of a GPU
// pair). A link direction is a resource, as SimGrid's constraints are (a SPLITDUPLEX link: two, a
// half-duplex or fatpipe link: one). Then colour refinement (1-dimensional Weisfeiler-Leman) on the
// flow-resource incidence graph: flows start coloured by (bytes, delay, route latency, m, hops),
// resources by (bandwidth, fatpipe); a flow's next colour is its colour and the sorted colours of
// its resources, a resource's next colour is its colour and the sorted colours of its flows; stop
// when neither count grows. Why this is exact: max-min progressive filling raises every unfrozen
// flow to level/penalty; if equal-coloured flows have equal rates and each resource of a class
// carries the same number of flows of each class, the resources of a class saturate together and
// freeze the same flow classes, so equal rates persist, and equal flows end together. 4 GPUs,
// 2 per node, all_to_all: 12 flows, 2 classes (intra-node, inter-node), 3 resource classes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "flow_fluid.h"

namespace twinccl::sim::detail {
namespace {

struct KeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& v) const {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::uint64_t x : v) h = (h ^ x) * 1099511628211ULL + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};

std::uint64_t bits(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Gives each distinct key a colour, numbered by first appearance.
class Palette {
 public:
  int colour(const std::vector<std::uint64_t>& key) {
    return ids_.try_emplace(key, static_cast<int>(ids_.size())).first->second;
  }
  int size() const { return static_cast<int>(ids_.size()); }

 private:
  std::unordered_map<std::vector<std::uint64_t>, int, KeyHash> ids_;
};

}  // namespace

RoundFlows round_flows(const FlowProgram& program, const std::vector<int>& transfers) {
  RoundFlows out;
  std::unordered_map<int, int> resource_of;  // program resource (2 link + direction) -> index
  std::map<std::tuple<int, double, double>, int> flow_of;  // (route, bytes, delay) -> flow
  std::vector<int> route_first;  // per program route: its first flow's resources, -1 = unseen
  out.flow_of_transfer.reserve(transfers.size());
  for (int t : transfers) {
    const FlowTransfer& tr = program.transfers[static_cast<std::size_t>(t)];
    // SimGrid moves whole bytes (flow_simgrid.cc: llround).
    const double bytes = static_cast<double>(std::llround(tr.bytes));
    const auto [it, fresh] =
        flow_of.try_emplace({tr.route, bytes, tr.delay_s}, static_cast<int>(out.flows.size()));
    out.flow_of_transfer.push_back(it->second);
    if (!fresh) {
      out.flows[static_cast<std::size_t>(it->second)].multiplicity += tr.copies;
      continue;
    }
    const FlowRoute& route = program.routes[static_cast<std::size_t>(tr.route)];
    FluidFlow f;
    f.bytes = bytes;
    f.delay_s = tr.delay_s;
    f.latency_s = route.latency_s;
    f.multiplicity = tr.copies;
    f.first = static_cast<int>(out.flow_resources.size());
    for (const FlowHop& hop : route.hops) {
      const FlowLink& l = program.links[static_cast<std::size_t>(hop.link)];
      const int key = 2 * hop.link + (l.full_duplex && !l.fatpipe && !hop.forward ? 1 : 0);
      const auto [r, added] = resource_of.try_emplace(key, static_cast<int>(out.resources.size()));
      if (added) out.resources.push_back({l.bandwidth_bytes_per_s, l.fatpipe});
      out.flow_resources.push_back(r->second);
    }
    f.last = static_cast<int>(out.flow_resources.size());
    out.flows.push_back(f);
  }
  return out;
}

FlowClasses flow_classes(const RoundFlows& round, std::size_t max_classes) {
  const std::size_t nf = round.flows.size(), nr = round.resources.size();
  // Flows on each resource (CSR).
  std::vector<int> start(nr + 1, 0), users(round.flow_resources.size());
  for (int r : round.flow_resources) ++start[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 0; r < nr; ++r) start[r + 1] += start[r];
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (std::size_t f = 0; f < nf; ++f) {
    const FluidFlow& fl = round.flows[f];
    for (int i = fl.first; i < fl.last; ++i) {
      users[static_cast<std::size_t>(
          fill[static_cast<std::size_t>(round.flow_resources[static_cast<std::size_t>(i)])]++)] =
          static_cast<int>(f);
    }
  }
  std::vector<int> fc(nf), rc(nr);
  int flow_count = 0, resource_count = 0;
  {
    Palette pf, pr;
    for (std::size_t f = 0; f < nf; ++f) {
      const FluidFlow& fl = round.flows[f];
      fc[f] = pf.colour({bits(fl.bytes), bits(fl.delay_s), bits(fl.latency_s),
                         bits(fl.multiplicity), static_cast<std::uint64_t>(fl.last - fl.first)});
    }
    for (std::size_t r = 0; r < nr; ++r) {
      rc[r] = pr.colour({bits(round.resources[r].bandwidth_bytes_per_s),
                         round.resources[r].fatpipe ? 1ULL : 0ULL});
    }
    flow_count = pf.size();
    resource_count = pr.size();
  }
  std::vector<std::uint64_t> key;
  for (;;) {
    if (static_cast<std::size_t>(flow_count) > max_classes) return {};
    Palette pf, pr;
    std::vector<int> nfc(nf), nrc(nr);
    for (std::size_t f = 0; f < nf; ++f) {
      const FluidFlow& fl = round.flows[f];
      key.assign(1, static_cast<std::uint64_t>(fc[f]));
      for (int i = fl.first; i < fl.last; ++i) {
        key.push_back(static_cast<std::uint64_t>(
            rc[static_cast<std::size_t>(round.flow_resources[static_cast<std::size_t>(i)])]));
      }
      std::sort(key.begin() + 1, key.end());
      nfc[f] = pf.colour(key);
    }
    for (std::size_t r = 0; r < nr; ++r) {
      key.assign(1, static_cast<std::uint64_t>(rc[r]));
      for (int i = start[r]; i < start[r + 1]; ++i) {
        key.push_back(static_cast<std::uint64_t>(
            nfc[static_cast<std::size_t>(users[static_cast<std::size_t>(i)])]));
      }
      std::sort(key.begin() + 1, key.end());
      nrc[r] = pr.colour(key);
    }
    const bool stable = pf.size() == flow_count && pr.size() == resource_count;
    fc.swap(nfc);
    rc.swap(nrc);
    flow_count = pf.size();
    resource_count = pr.size();
    if (stable) break;
  }
  if (static_cast<std::size_t>(flow_count) > max_classes) return {};
  // The quotient, read off one representative of each class.
  FlowClasses q;
  q.flow_class = fc;
  q.flows.assign(static_cast<std::size_t>(flow_count), {});
  q.resources.assign(static_cast<std::size_t>(resource_count), {});
  std::vector<bool> seen_f(q.flows.size(), false), seen_r(q.resources.size(), false);
  for (std::size_t f = 0; f < nf; ++f) {
    const auto c = static_cast<std::size_t>(fc[f]);
    if (seen_f[c]) continue;
    seen_f[c] = true;
    const FluidFlow& fl = round.flows[f];
    ClassFlow& cf = q.flows[c];
    cf.flow = fl;
    cf.bound_bytes_per_s = -1.0;
    std::map<int, int> per_class;
    for (int i = fl.first; i < fl.last; ++i) {
      const auto r = static_cast<std::size_t>(round.flow_resources[static_cast<std::size_t>(i)]);
      ++per_class[rc[r]];
      const double bw = round.resources[r].bandwidth_bytes_per_s;
      if (cf.bound_bytes_per_s < 0.0 || bw < cf.bound_bytes_per_s) cf.bound_bytes_per_s = bw;
    }
    if (fl.latency_s > 0.0) cf.bound_bytes_per_s = -1.0;  // TCP-gamma 0: no bound
    cf.resources.assign(per_class.begin(), per_class.end());
  }
  for (std::size_t r = 0; r < nr; ++r) {
    const auto c = static_cast<std::size_t>(rc[r]);
    if (seen_r[c]) continue;
    seen_r[c] = true;
    ClassResource& cr = q.resources[c];
    cr.resource = round.resources[r];
    std::map<int, int> per_class;
    for (int i = start[r]; i < start[r + 1]; ++i) {
      ++per_class[fc[static_cast<std::size_t>(users[static_cast<std::size_t>(i)])]];
    }
    cr.flows.assign(per_class.begin(), per_class.end());
  }
  q.valid = true;
  return q;
}

}  // namespace twinccl::sim::detail
