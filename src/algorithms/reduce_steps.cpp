#include "reduce_steps.hpp"

#include "multilane/collective.hpp"

namespace multilane::algo {

ScheduleBuilder reduction_builder(Collective collective, std::string algorithm, int num_ranks,
                                  const BuildParams& params, std::uint64_t segment) {
  ScheduleBuilder b(collective, std::move(algorithm), num_ranks, params.root, params.size, segment);
  b.set_element_size(params.element_size);
  return b;
}

Pieces even_pieces(std::uint64_t size, int n, std::uint64_t element_size) {
  const std::uint64_t elements = size / element_size;
  const auto count = static_cast<std::uint64_t>(n);
  Pieces p;
  p.bounds.push_back(0);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t e = elements / count + (i < elements % count ? 1 : 0);
    p.bounds.push_back(p.bounds.back() + e * element_size);
  }
  return p;
}

Pieces equal_pieces(std::uint64_t block, int n) {
  Pieces p;
  for (int i = 0; i <= n; ++i) p.bounds.push_back(static_cast<std::uint64_t>(i) * block);
  return p;
}

Pieces reduce_scatter_blocks(const BuildParams& params, int p) {
  if (params.counts.empty()) return equal_pieces(params.size, p);
  return {.bounds = block_offsets(params.counts, p)};
}

namespace {
int wrap(int i, int n) {
  return ((i % n) + n) % n;
}
}  // namespace

std::vector<OpIndex> ring_reduce_scatter(ScheduleBuilder& b, std::span<const int> ring,
                                         int position, const PieceRange& input,
                                         const PieceRange& place, std::span<const OpIndex> after) {
  const int n = static_cast<int>(ring.size());
  const int right = ring[wrap(position + 1, n)];
  const int left = ring[wrap(position - 1, n)];
  std::vector<OpIndex> emitted;
  if (n == 1) {
    emitted.push_back(b.copy(place(position), input(position), after));
    return emitted;
  }
  OpIndex combined = kNoOp;
  OpIndex sent = kNoOp;
  for (int s = 0; s + 1 < n; ++s) {
    const int out = wrap(position - s - 1, n);
    const int in = wrap(position - s - 2, n);
    std::vector<OpIndex> deps(after.begin(), after.end());
    deps.push_back(combined);
    // The room for piece `in` may be the one the previous step's piece was sent from.
    deps.push_back(sent);
    // An empty piece (reduce-scatterv's zero counts) emits nothing: the next step then orders
    // itself after the last operations that did happen.
    const OpIndex send = b.send(right, s == 0 ? input(out) : place(out), kAnyLane, deps);
    if (send != kNoOp) sent = send;
    const OpIndex own = b.copy(place(in), input(in), deps);
    const OpIndex combine = b.recv_reduce(left, place(in), kAnyLane, {own});
    if (combine != kNoOp) combined = combine;
    emitted.insert(emitted.end(), {send, own});
    emitted.push_back(combined);
  }
  return emitted;
}

std::vector<OpIndex> ring_allgather(ScheduleBuilder& b, std::span<const int> ring, int position,
                                    const PieceRange& place, std::span<const OpIndex> after) {
  const int n = static_cast<int>(ring.size());
  const int right = ring[wrap(position + 1, n)];
  const int left = ring[wrap(position - 1, n)];
  std::vector<OpIndex> received;
  std::vector<OpIndex> deps(after.begin(), after.end());
  for (int s = 0; s + 1 < n; ++s) {
    b.send(right, place(wrap(position - s, n)), kAnyLane, deps);
    const OpIndex got = b.recv(left, place(wrap(position - s - 1, n)), kAnyLane, deps);
    received.push_back(got);
    if (got != kNoOp) deps.assign(1, got);  // an empty piece (nothing received) orders nothing
  }
  return received;
}

std::vector<OpIndex> recursive_halving(ScheduleBuilder& b, int q, int position,
                                       const std::function<int(int)>& rank_at, const Pieces& pieces,
                                       Buffer acc, std::span<const OpIndex> after) {
  std::vector<OpIndex> emitted(after.begin(), after.end());
  std::vector<OpIndex> ready(after.begin(), after.end());
  int lo = 0;
  int hi = q;
  for (int d = q / 2; d >= 1; d /= 2) {
    const int partner = rank_at(position ^ d);
    const int mid = lo + d;
    const bool lower = (position & d) == 0;
    const Range keep = lower ? pieces.range(acc, lo, mid) : pieces.range(acc, mid, hi);
    const Range give = lower ? pieces.range(acc, mid, hi) : pieces.range(acc, lo, mid);
    const OpIndex sent = b.send(partner, give, kAnyLane, ready);
    const OpIndex combined = b.recv_reduce(partner, keep, kAnyLane, ready);
    emitted.push_back(sent);
    emitted.push_back(combined);
    ready.assign(1, combined);
    if (lower) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return emitted;
}

std::vector<OpIndex> recursive_doubling_allreduce(ScheduleBuilder& b, int n, int position,
                                                  const std::function<int(int)>& rank_at,
                                                  const Range& range, const Range& incoming,
                                                  std::span<const OpIndex> after) {
  const int q = largest_power_of_two(n);
  std::vector<OpIndex> ready(after.begin(), after.end());
  if (position >= q) {
    const int partner = rank_at(position - q);
    const OpIndex sent = b.send(partner, range, kAnyLane, ready);
    return {b.recv(partner, range, kAnyLane, {sent})};
  }
  const bool has_extra = position + q < n;
  if (has_extra) ready.assign(1, b.recv_reduce(rank_at(position + q), range, kAnyLane, ready));
  for (int mask = 1; mask < q; mask <<= 1) {
    const int partner = rank_at(position ^ mask);
    const OpIndex sent = b.send(partner, range, kAnyLane, ready);
    const OpIndex got = b.recv(partner, incoming, kAnyLane, ready);
    ready.assign(1, b.reduce(range, incoming, {got, sent}));
  }
  if (has_extra) ready.push_back(b.send(rank_at(position + q), range, kAnyLane, ready));
  return ready;
}

}  // namespace multilane::algo
