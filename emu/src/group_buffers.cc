// Shared buffers between the collectives of one group (see group_buffers.h).
#include "group_buffers.h"

#include <algorithm>

#include "twinccl/call_site_text.h"

namespace twinccl::emu {

std::string GroupBoard::post(std::uint64_t first_seq, int rank, int nranks,
                             const std::string& label, std::span<const OpDesc* const> collectives) {
  std::vector<Posted> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& entry = entries_[first_seq];
    if (!entry.skipped) {
      if (entry.ranges.size() + 2 * collectives.size() > kMaxGroupRanges) {
        entry.skipped = true;
        entry.ranges.clear();
        entry.ranges.shrink_to_fit();
      } else {
        for (std::size_t j = 0; j < collectives.size(); ++j) {
          const OpDesc& op = *collectives[j];
          for (const ByteRange& r : {output_range(op, rank, nranks), input_range(op, rank, nranks)})
            if (r.begin != r.end)
              entry.ranges.push_back(
                  {r, static_cast<int>(j), op.where.file_name(), op.where.line()});
        }
      }
    }
    if (++entry.posted < nranks) return "";
    all = std::move(entry.ranges);
    entries_.erase(first_seq);
  }
  return check(all, label);
}

std::string GroupBoard::check(std::vector<Posted>& ranges, const std::string& label) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Posted& a, const Posted& b) { return a.range.begin < b.range.begin; });
  std::vector<const Posted*> open;  // earlier ranges that may still reach the current one
  for (const Posted& p : ranges) {
    std::erase_if(open, [&](const Posted* q) { return q->range.end <= p.range.begin; });
    for (const Posted* q : open) {
      if (q->range.rank == p.range.rank || q->op == p.op) continue;
      if (!q->range.output && !p.range.output) continue;  // two reads: fine
      const Posted& writer = p.range.output ? p : *q;
      const Posted& other = p.range.output ? *q : p;
      auto where = [](const Posted& x) {
        std::string file = x.file;
        if (auto slash = file.find_last_of('/'); slash != std::string::npos)
          file = file.substr(slash + 1);
        return file + ":" + std::to_string(x.line);
      };
      auto side = [&](const Posted& x) {
        return "rank " + std::to_string(x.range.rank) + "'s " +
               (x.range.output ? "output (recvbuf at " : "input (sendbuf at ") +
               address_text(x.range.begin) + ", " + std::to_string(x.range.end - x.range.begin) +
               " bytes) of the group's collective " + std::to_string(x.op + 1) + " (" + where(x) +
               ")";
      };
      return label + ": ranks " + std::to_string(writer.range.rank) + " and " +
             std::to_string(other.range.rank) +
             " share memory across two collectives of one "
             "group: " +
             side(writer) + " overlaps " + side(other) +
             ". On GPUs a group's collectives may run at once and each rank's buffers are its own "
             "device memory; here ranks are threads of one process. Give each rank its own "
             "output buffers. Nothing was written";
    }
    open.push_back(&p);
  }
  return "";
}

}  // namespace twinccl::emu
