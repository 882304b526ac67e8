// scan.cpp — the prefix reductions (MPI_Scan, MPI_Exscan) side by side: the pipelined chain
// (Open MPI's linear scan), recursive doubling, and a site-aware form that crosses the WAN once.
//
// Rank i's result is x_0 (+) ... (+) x_i (scan) or x_0 (+) ... (+) x_{i-1} (exscan), operands in
// rank order, so every combine puts the lower ranks' partial on the left: a Reduce or RecvReduce
// writes range = range (+) other, so the partial from below is what lands in `range` first.
//
// recursive-doubling (Hillis and Steele, CACM 1986): in step k every rank sends its partial
// (ranks i-2^k+1..i) to i+2^k and puts the partial of i-2^k in front of its own:
//
//   step 0   x0 -> 1   x1 -> 2   x2 -> 3        rank 3: x2|x3
//   step 1   [0] -> 2  [0,1] -> 3               rank 3: x0|x1 (+) x2|x3
//
// ceil(lg p) steps for a scan; an exscan first shifts every input one rank up (x_{i-1} to rank
// i) and scans those: one step more.
//
// multilane-sites: the ranks are cut into runs of consecutive ranks on one site (one run per
// site when every site holds consecutive ranks). Each run scans its own ranks (recursive
// doubling over the LAN). The last rank of each run sends the run's total T across the WAN to
// every later run in k pieces, piece i to the run's i-th rank (k lanes, k the receiving run's
// size or BuildParams::wan_pairs), all at once; position i combines its pieces in run order, a
// ring allgather in the run gives every rank the whole prefix E of the runs before it, and every
// rank ends with E (+) its run's partial.
//
//   site 0: r0 r1 r2 r3          site 1: r4 r5 r6 r7
//           scan ----> T ==piece 0==> r4
//                        ==piece 1==>    r5         then a ring allgather of E in site 1,
//                        ==piece 2==>       r6      and E (+) partial at every rank
//                        ==piece 3==>          r7
//
// Every byte crosses the WAN once per pair of runs, k node pairs at once, and the WAN wait
// overlaps the local scans.
#include <algorithm>
#include <bit>
#include <functional>
#include <vector>

#include "builders.hpp"
#include "reduce_steps.hpp"
#include "tree_reduce.hpp"

namespace multilane::algo {

namespace {

using RankAt = std::function<int(int)>;

Range slot(int index, std::uint64_t size) {
  return {Buffer::Scratch, static_cast<std::uint64_t>(index) * size, size};
}

// The scratch slots (index into slot()) between which a rank's partials alternate; -1: none.
struct Slots {
  int a = -1;
  int b = -1;
};

// Hillis–Steele inclusive scan over positions 0..n-1: `input` holds the position's own
// contribution once `after` completed (read only); the last combine writes `result`. Returns
// the operation that completes `result` (for position 0, a copy of `input` unless it is
// `result` itself).
OpIndex inclusive_scan(ScheduleBuilder& b, int n, int position, const RankAt& rank_at,
                       const Range& input, std::span<const OpIndex> after, const Range& result,
                       const Slots& slots) {
  const std::uint64_t m = input.length;
  Range partial = input;
  std::vector<OpIndex> partial_ready(after.begin(), after.end());
  // Operations that read each slot's bytes since they were written: the next write waits.
  std::vector<OpIndex> readers_a;
  std::vector<OpIndex> readers_b;
  const auto readers_of = [&](const Range& r) -> std::vector<OpIndex>* {
    if (slots.a >= 0 && r == slot(slots.a, m)) return &readers_a;
    if (slots.b >= 0 && r == slot(slots.b, m)) return &readers_b;
    return nullptr;
  };
  const int last_receive_step =
      position > 0 ? std::bit_width(static_cast<unsigned>(position)) - 1 : -1;
  for (int step = 0; (1 << step) < n; ++step) {
    const int d = 1 << step;
    if (position + d < n) {
      const OpIndex sent = b.send(rank_at(position + d), partial, kAnyLane, partial_ready);
      if (auto* readers = readers_of(partial)) readers->push_back(sent);
    }
    if (position - d < 0) continue;
    const Range into = step == last_receive_step
                           ? result
                           : (partial == slot(slots.a, m) ? slot(slots.b, m) : slot(slots.a, m));
    std::vector<OpIndex> free_first;
    if (auto* readers = readers_of(into)) {
      free_first = std::move(*readers);
      readers->clear();
    }
    const OpIndex got = b.recv(rank_at(position - d), into, kAnyLane, free_first);
    std::vector<OpIndex> deps = partial_ready;
    deps.push_back(got);
    const OpIndex combined = b.reduce(into, partial, deps);
    if (auto* readers = readers_of(partial)) readers->push_back(combined);
    partial = into;
    partial_ready = {combined};
  }
  if (position > 0) return partial_ready.back();
  if (input == result) return after.empty() ? kNoOp : after.back();
  return b.copy(result, input, after);
}

// The slots an inclusive scan at `position` uses: one per receive but the last, two at most,
// taken from `next_slot` on (which moves past them).
void take_scan_slots(int position, int& next_slot, Slots& slots) {
  const int receives = position > 0 ? std::bit_width(static_cast<unsigned>(position)) : 0;
  if (receives >= 2) slots.a = next_slot++;
  if (receives >= 3) slots.b = next_slot++;
}

// Exclusive scan over positions 0..n-1: position i gets x_0 (+) ... (+) x_{i-1} in `result`
// (position 0 gets nothing). Takes its slots from `next_slot` on; returns the operation that
// completes `result` (kNoOp at position 0).
OpIndex exclusive_scan(ScheduleBuilder& b, int n, int position, const RankAt& rank_at,
                       const Range& input, const Range& result, int& next_slot) {
  const std::uint64_t m = input.length;
  if (position + 1 < n) b.send(rank_at(position + 1), input);
  if (position == 0) return kNoOp;
  // Positions 1..n-1 scan the shifted inputs; position 1's is already its result.
  const int shifted = position - 1;
  const Range held = shifted == 0 ? result : slot(next_slot++, m);
  const OpIndex got = b.recv(rank_at(position - 1), held);
  Slots slots;
  take_scan_slots(shifted, next_slot, slots);
  const RankAt shifted_rank = [&](int v) { return rank_at(v + 1); };
  return inclusive_scan(b, n - 1, shifted, shifted_rank, held, std::span<const OpIndex>(&got, 1),
                        result, slots);
}

// Either scan of whole vectors over positions 0..n-1, its slots taken from `next_slot` on.
// Returns the operation that completes `result`.
OpIndex prefix(ScheduleBuilder& b, Collective collective, int n, int position,
               const RankAt& rank_at, const Range& input, const Range& result, int& next_slot) {
  if (collective == Collective::Exscan) {
    return exclusive_scan(b, n, position, rank_at, input, result, next_slot);
  }
  Slots slots;
  take_scan_slots(position, next_slot, slots);
  return inclusive_scan(b, n, position, rank_at, input, {}, result, slots);
}

// The ranks cut into runs of consecutive ranks on one site: runs[j] = {first, end}.
struct SiteRun {
  int first = 0;
  int end = 0;  // one past the last
  int size() const { return end - first; }
};
std::vector<SiteRun> site_runs(const Platform& platform) {
  std::vector<SiteRun> runs;
  for (int r = 0; r < platform.num_ranks(); ++r) {
    if (runs.empty() || platform.site_of(r) != platform.site_of(runs.back().first)) {
      runs.push_back({r, r});
    }
    runs.back().end = r + 1;
  }
  return runs;
}

// The lanes into a run: its first k ranks each get 1/k of the total of every run before it, k the
// run's size, or BuildParams::wan_pairs when smaller.
int lanes_into(const SiteRun& run, const BuildParams& params) {
  return params.wan_pairs > 0 ? std::min(params.wan_pairs, run.size()) : run.size();
}
Pieces lane_pieces(const SiteRun& run, const BuildParams& params) {
  return even_pieces(params.size, lanes_into(run, params), params.element_size);
}

// Rank 0 sends its input on; every other rank receives its predecessor's prefix segment by
// segment, combines (scan: into its result; exscan: into scratch, keeping the prefix as its
// result) and sends the new prefix on, so the p-1 hops pipeline.
Schedule chain_prefix(Collective collective, const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t m = params.size;
  const std::uint64_t segment = element_segment(params.segment, params.element_size);
  ScheduleBuilder b = reduction_builder(collective, "chain", p, params, segment);
  const bool exclusive = collective == Collective::Exscan;
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    if (r == 0 && !exclusive) b.copy({Buffer::Recv, 0, m}, {Buffer::Send, 0, m});
    if (r > 0 && exclusive && r + 1 < p) b.need_scratch(m);
    for (std::uint64_t at = 0; at < m; at += segment) {
      const std::uint64_t length = std::min(segment, m - at);
      const Range own{Buffer::Send, at, length};
      const Range result{Buffer::Recv, at, length};
      if (r == 0) {
        if (p > 1) b.send(1, own);
        continue;
      }
      const OpIndex got = b.recv(r - 1, result);
      if (!exclusive) {
        const OpIndex combined = b.reduce(result, own, {got});
        if (r + 1 < p) b.send(r + 1, result, kAnyLane, {combined});
      } else if (r + 1 < p) {
        const Range next{Buffer::Scratch, at, length};
        const OpIndex kept = b.copy(next, result, {got});
        const OpIndex combined = b.reduce(next, own, {kept});
        b.send(r + 1, next, kAnyLane, {combined});
      }
    }
  }
  return b.finish();
}

Schedule recursive_doubling_prefix(Collective collective, const Platform& platform,
                                   const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t m = params.size;
  ScheduleBuilder b = reduction_builder(collective, "recursive-doubling", p, params);
  const RankAt same = [](int v) { return v; };
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    int slots = 0;
    prefix(b, collective, p, r, same, {Buffer::Send, 0, m}, {Buffer::Recv, 0, m}, slots);
    b.need_scratch(static_cast<std::uint64_t>(slots) * m);
  }
  return b.finish();
}

Schedule sites_prefix(Collective collective, const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t m = params.size;
  const bool exclusive = collective == Collective::Exscan;
  const std::vector<SiteRun> runs = site_runs(platform);
  ScheduleBuilder b = reduction_builder(collective, "multilane-sites", p, params);
  const Range own{Buffer::Send, 0, m};
  const Range recv{Buffer::Recv, 0, m};
  for (std::size_t j = 0; j < runs.size(); ++j) {
    const SiteRun& run = runs[j];
    const RankAt in_run = [&run](int v) { return run.first + v; };
    for (int r = run.first; r < run.end; ++r) {
      b.start_rank(r);
      const int position = r - run.first;
      int slots = 0;
      // The run's own partial: the result itself in the first run; else a slot that E goes in
      // front of (the own input for a scan's first position, nothing for an exscan's).
      Range local = recv;
      if (j > 0) local = position == 0 ? own : slot(slots++, m);
      const OpIndex local_done =
          prefix(b, collective, run.size(), position, in_run, own, local, slots);
      // The run's total, from its last rank to the first rank of every later run.
      if (position == run.size() - 1 && j + 1 < runs.size()) {
        Range total = local;
        OpIndex total_ready = local_done;
        if (exclusive) {
          total = own;
          total_ready = kNoOp;
          if (run.size() > 1) {
            total = slot(slots++, m);
            const OpIndex kept = b.copy(total, local, {local_done});
            total_ready = b.reduce(total, own, {kept});
          }
        }
        for (std::size_t later = j + 1; later < runs.size(); ++later) {
          const Pieces pieces = lane_pieces(runs[later], params);
          for (int i = 0; i < pieces.count(); ++i) {
            b.send(runs[later].first + i, pieces.range(total.buffer, i, i + 1, total.offset),
                   kAnyLane, {total_ready});
          }
        }
      }
      if (j > 0) {
        // E, the totals of the runs before this one, in run order: piece i lands at position i over
        // the WAN, a ring allgather gives every position all of E, and E goes in front of the
        // partial.
        const Pieces pieces = lane_pieces(run, params);
        const auto place = [&](int i) {
          return i < pieces.count() ? pieces.range(Buffer::Recv, i, i + 1) : Range{};
        };
        std::vector<OpIndex> earlier;
        if (position < pieces.count()) {
          earlier.push_back(b.recv(runs[0].end - 1, place(position)));
          for (std::size_t i = 1; i < j; ++i) {
            earlier = {b.recv_reduce(runs[i].end - 1, place(position), kAnyLane, earlier)};
          }
        }
        const OpIndex before = b.ops_of_current_rank();
        std::vector<int> ring(run.size());
        for (int v = 0; v < run.size(); ++v) ring[v] = in_run(v);
        ring_allgather(b, ring, position, place, earlier);
        std::vector<OpIndex> deps(earlier.begin(), earlier.end());
        for (OpIndex op = before; op < b.ops_of_current_rank(); ++op) deps.push_back(op);
        deps.push_back(local_done);
        if (!(exclusive && position == 0)) b.reduce(recv, local, deps);
      }
      b.need_scratch(static_cast<std::uint64_t>(slots) * m);
    }
  }
  return b.finish();
}

}  // namespace

Schedule scan_chain(const Platform& platform, const BuildParams& params) {
  return chain_prefix(Collective::Scan, platform, params);
}
Schedule exscan_chain(const Platform& platform, const BuildParams& params) {
  return chain_prefix(Collective::Exscan, platform, params);
}
Schedule scan_recursive_doubling(const Platform& platform, const BuildParams& params) {
  return recursive_doubling_prefix(Collective::Scan, platform, params);
}
Schedule exscan_recursive_doubling(const Platform& platform, const BuildParams& params) {
  return recursive_doubling_prefix(Collective::Exscan, platform, params);
}
int scan_multilane_sites_wan_pairs(const Platform& platform, const BuildParams& params) {
  const std::vector<SiteRun> runs = site_runs(platform);
  int k = 0;
  for (std::size_t j = 1; j < runs.size(); ++j) {
    const int into = lanes_into(runs[j], params);
    k = k == 0 ? into : std::min(k, into);
  }
  return k;
}

Schedule scan_multilane_sites(const Platform& platform, const BuildParams& params) {
  return sites_prefix(Collective::Scan, platform, params);
}
Schedule exscan_multilane_sites(const Platform& platform, const BuildParams& params) {
  return sites_prefix(Collective::Exscan, platform, params);
}

}  // namespace multilane::algo
