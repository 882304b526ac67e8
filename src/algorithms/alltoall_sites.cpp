// alltoall_sites.cpp — the site-aware alltoall (`multilane-sites`, also alltoallv): every pair
// of sites crosses the WAN once in each direction, on k lanes at once, in k messages instead of
// one per pair of ranks.
//
//   step 1  inside every site, the blocks between its ranks go directly, all posted at once;
//   step 2  for every other site t, t's ranks are cut into k parts (consecutive, about equal
//           bytes from this site); every rank gives lane leader i (on a node of its own where
//           the site has k nodes, site_parts.hpp) its blocks for part i;
//   step 3  lane leader i sends what it gathered for t, one message, to lane leader i of t: k
//           pairs cross between two sites at once, each once in each direction;
//   step 4  each receiving leader hands every rank of its part that rank's blocks, sorted by
//           sender: one message per run of consecutive senders.
//
//      site 0              site 1           k = 4, one rank per part: a0 gathers what site 0
//    a0  a1  a2  a3      b0  b1  b2  b3     sends b0 and sends it to b0 in one message, a1
//    a0 ==== lane 0 ==== b0                 what it sends b1, ...; the same from site 1 back.
//    a1 ==== lane 1 ==== b1                 With k = 2, b0 gets site 0's blocks for b0 and b1
//    ..                                     and hands b1 its share.
//
// The WAN carries the same bytes as a direct alltoall, in k messages per pair of sites and
// direction instead of one per pair of ranks (NCCL's PXN aggregates an alltoall's messages
// through the rank nearest the right NIC for the same reason): fewer, larger messages and k
// connections per pair of sites. Where every node pair crossing at once already fills the WAN
// (one rank per node, no limit per connection), the gathering and handing out on the LAN make
// it slower than `linear`, and the model says so. k is BuildParams::wan_pairs when given, else
// the smallest site's rank count, at most that. A bundle crosses striped over every lane of its
// node pair, as the linear alltoall's blocks do; the rest goes on the LAN.
#include <algorithm>
#include <vector>

#include "alltoall_blocks.hpp"
#include "builders.hpp"
#include "site_parts.hpp"

namespace multilane::algo {

namespace {

// The blocks from `senders` to `receivers` that one lane carries between two sites. Its
// leaders hold them sender after sender (each sender's blocks in receiver order); each
// receiver is handed its own, in sender order.
class Bundle {
 public:
  Bundle(const BuildParams& params, int p, const std::vector<int>& senders,
         const std::vector<int>& receivers)
      : senders_(senders.size()), receivers_(receivers.size()) {
    sizes_.reserve(senders_ * receivers_);
    for (int u : senders) {
      for (int v : receivers) sizes_.push_back(block_bytes(params, p, u, v));
    }
    by_sender_.assign(senders_ * (receivers_ + 1), 0);
    by_receiver_.assign(receivers_ * (senders_ + 1), 0);
    std::uint64_t at = 0;
    for (std::size_t a = 0; a < senders_; ++a) {
      for (std::size_t b = 0; b <= receivers_; ++b) {
        by_sender_[a * (receivers_ + 1) + b] = at;
        if (b < receivers_) at += bytes(a, b);
      }
    }
    at = 0;
    for (std::size_t b = 0; b < receivers_; ++b) {
      for (std::size_t a = 0; a <= senders_; ++a) {
        by_receiver_[b * (senders_ + 1) + a] = at;
        if (a < senders_) at += bytes(a, b);
      }
    }
    total_ = at;
  }
  std::uint64_t total() const { return total_; }
  std::uint64_t bytes(std::size_t a, std::size_t b) const { return sizes_[a * receivers_ + b]; }
  // Sender a's blocks to receivers [first, last), as the leaders hold them.
  Range of_sender(std::uint64_t base, std::size_t a, std::size_t first, std::size_t last) const {
    const std::uint64_t begin = by_sender_[a * (receivers_ + 1) + first];
    return {Buffer::Scratch, base + begin, by_sender_[a * (receivers_ + 1) + last] - begin};
  }
  // Receiver b's blocks from senders [first, last), laid out receiver after receiver.
  Range of_receiver(std::uint64_t base, std::size_t b, std::size_t first, std::size_t last) const {
    const std::uint64_t begin = by_receiver_[b * (senders_ + 1) + first];
    return {Buffer::Scratch, base + begin, by_receiver_[b * (senders_ + 1) + last] - begin};
  }
  // Whether each receiver's blocks already lie together, in sender order, as the leaders hold
  // them (one sender, or one receiver): then of_receiver() ranges are of_sender() ranges.
  bool receiver_major() const { return senders_ == 1 || receivers_ == 1; }

 private:
  std::size_t senders_;
  std::size_t receivers_;
  std::vector<std::uint64_t> sizes_;
  std::vector<std::uint64_t> by_sender_;    // [a][b], b up to receivers_
  std::vector<std::uint64_t> by_receiver_;  // [b][a], a up to senders_
  std::uint64_t total_ = 0;
};

using Parts = std::vector<std::vector<int>>;  // [lane]: the ranks it carries blocks to

// parts[s][t]: how site t's ranks are cut into lanes for the blocks site s sends them.
std::vector<std::vector<Parts>> plan_parts(const SiteLanes& lanes, const BuildParams& params,
                                           int p) {
  const std::size_t m = lanes.sites.size();
  std::vector<std::vector<Parts>> parts(m, std::vector<Parts>(m));
  for (std::size_t s = 0; s < m; ++s) {
    for (std::size_t t = 0; t < m; ++t) {
      if (s == t) continue;
      std::vector<std::uint64_t> incoming(static_cast<std::size_t>(p), 0);
      for (int v : lanes.sites[t]) {
        for (int u : lanes.sites[s]) incoming[v] += block_bytes(params, p, u, v);
      }
      parts[s][t] = lane_parts(lanes.sites[t], lanes.k, BlockSizes(params.size, incoming));
    }
  }
  return parts;
}

// The rank's program; `scratch` grows by what it holds.
class RankProgram {
 public:
  RankProgram(ScheduleBuilder& b, const SiteLanes& lanes,
              const std::vector<std::vector<Parts>>& parts, const BuildParams& params, int p, int r)
      : b_(b),
        lanes_(lanes),
        parts_(parts),
        params_(params),
        p_(p),
        r_(r),
        s_(static_cast<std::size_t>(lanes.site_of[r])),
        members_(lanes.sites[s_]),
        leaders_(lanes.leaders[s_]),
        lane_(lanes.lane_of[r]),
        send_(blocks_of(Buffer::Send, r, p, params)),
        recv_(blocks_of(Buffer::Recv, r, p, params)) {}

  void build() {
    within_site();
    to_lane_leaders();
    if (lane_ >= 0) {
      gather_and_cross();
      receive_and_hand_out();
    }
    from_lane_leaders();
    b_.need_scratch(scratch_);
  }

 private:
  std::size_t sites() const { return lanes_.sites.size(); }

  // Step 1.
  void within_site() {
    b_.copy(recv_(r_), send_(r_), {});
    for (int w : members_) {
      if (w == r_) continue;
      b_.send(w, send_(w));
      b_.recv(w, recv_(w));
    }
  }

  // Step 2: the blocks for each other site's part i go to lane leader i.
  void to_lane_leaders() {
    for (std::size_t t = 0; t < sites(); ++t) {
      if (t == s_) continue;
      for (int i = 0; i < lanes_.k; ++i) {
        if (i == lane_) continue;  // this rank leads the lane: gather_and_cross() copies them
        const std::vector<int>& part = parts_[s_][t][i];
        for (const Run& run : block_runs(part)) {
          b_.send(leaders_[i], send_.run(part[run.first], static_cast<int>(run.count)));
        }
      }
    }
  }

  // Step 3, leading lane q: the site's blocks for part q of every other site, in one message.
  void gather_and_cross() {
    for (std::size_t t = 0; t < sites(); ++t) {
      if (t == s_) continue;
      const std::vector<int>& part = parts_[s_][t][lane_];
      const Bundle bundle(params_, p_, members_, part);
      const std::uint64_t base = take_scratch(bundle.total());
      std::vector<OpIndex> gathered;
      for (std::size_t a = 0; a < members_.size(); ++a) {
        for (const Run& run : block_runs(part)) {
          const Range into = bundle.of_sender(base, a, run.first, run.first + run.count);
          gathered.push_back(
              members_[a] == r_
                  ? b_.copy(into, send_.run(part[run.first], static_cast<int>(run.count)), {})
                  : b_.recv(members_[a], into));
        }
      }
      b_.send(lanes_.leaders[t][lane_], {Buffer::Scratch, base, bundle.total()}, kAnyLane,
              gathered);
    }
  }

  // Step 3 and 4, leading lane q: every other site's bundle for this site's part q, and each
  // rank of the part its blocks.
  void receive_and_hand_out() {
    for (std::size_t t = 0; t < sites(); ++t) {
      if (t == s_) continue;
      const std::vector<int>& senders = lanes_.sites[t];
      const std::vector<int>& part = parts_[t][s_][lane_];
      const int from = lanes_.leaders[t][lane_];
      const Bundle bundle(params_, p_, senders, part);
      const std::vector<Run> runs = block_runs(senders);
      if (part.size() == 1 && part.front() == r_ && runs.size() == 1) {
        // Only this rank's blocks, from consecutive senders: they land where they belong.
        b_.recv(from, recv_.run(senders.front(), static_cast<int>(senders.size())), kAnyLane);
        continue;
      }
      const std::uint64_t base = take_scratch(bundle.total());
      const OpIndex got = b_.recv(from, {Buffer::Scratch, base, bundle.total()}, kAnyLane);
      for (std::size_t v = 0; v < part.size(); ++v) {
        if (part[v] == r_) {
          for (std::size_t a = 0; a < senders.size(); ++a) {
            b_.copy(recv_(senders[a]), bundle.of_sender(base, a, v, v + 1), {got});
          }
          continue;
        }
        hand_out(bundle, base, got, v, part[v], senders, runs);
      }
    }
  }

  // Receiver v's blocks, sorted by sender (copied so unless they lie so), one message per run.
  void hand_out(const Bundle& bundle, std::uint64_t base, OpIndex got, std::size_t v, int to,
                const std::vector<int>& senders, const std::vector<Run>& runs) {
    std::uint64_t sorted = base;
    std::vector<OpIndex> ready{got};
    if (!bundle.receiver_major()) {
      // Scratch for v's blocks alone, addressed as of_receiver() lays out every receiver's: the
      // base is moved back by where v's would start (unsigned arithmetic wraps back).
      const Range all = bundle.of_receiver(0, v, 0, senders.size());
      sorted = take_scratch(all.length) - all.offset;
      for (std::size_t a = 0; a < senders.size(); ++a) {
        ready.push_back(b_.copy(bundle.of_receiver(sorted, v, a, a + 1),
                                bundle.of_sender(base, a, v, v + 1), {got}));
      }
    }
    for (const Run& run : runs) {
      b_.send(to, bundle.of_receiver(sorted, v, run.first, run.first + run.count), kAnyLane, ready);
    }
  }

  // Step 4, in a part another rank leads: the blocks from each other site, from its leader.
  void from_lane_leaders() {
    for (std::size_t t = 0; t < sites(); ++t) {
      if (t == s_) continue;
      const std::vector<int>& senders = lanes_.sites[t];
      for (int i = 0; i < lanes_.k; ++i) {
        const std::vector<int>& part = parts_[t][s_][i];
        if (i == lane_ || std::find(part.begin(), part.end(), r_) == part.end()) continue;
        for (const Run& run : block_runs(senders)) {
          b_.recv(leaders_[i], recv_.run(senders[run.first], static_cast<int>(run.count)));
        }
      }
    }
  }

  std::uint64_t take_scratch(std::uint64_t bytes) {
    const std::uint64_t at = scratch_;
    scratch_ += bytes;
    return at;
  }

  ScheduleBuilder& b_;
  const SiteLanes& lanes_;
  const std::vector<std::vector<Parts>>& parts_;
  const BuildParams& params_;
  int p_;
  int r_;
  std::size_t s_;
  const std::vector<int>& members_;
  const std::vector<int>& leaders_;
  int lane_;
  Blocks send_;
  Blocks recv_;
  std::uint64_t scratch_ = 0;
};

}  // namespace

Schedule alltoall_multilane_sites(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const SiteLanes lanes = plan_site_lanes(platform, params);
  const auto parts = plan_parts(lanes, params, p);
  ScheduleBuilder b(Collective::Alltoall, "multilane-sites", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    RankProgram(b, lanes, parts, params, p, r).build();
  }
  return b.finish();
}

}  // namespace multilane::algo
