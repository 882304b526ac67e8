#include "sim/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace multilane::sim {

namespace {
constexpr std::uint8_t kSendReady = 1, kRecvReady = 2, kPrevLeft = 4, kStarted = 8;
constexpr std::uint32_t kCopyTag = 0x80000000u;
constexpr std::uint32_t kDone = 0xffffffffu;

bool later(const auto& a, const auto& b) {
  return a.time > b.time || (a.time == b.time && a.payload > b.payload);
}
}  // namespace

Engine::Engine(const Schedule& schedule, const Platform& platform, const SimOptions& options)
    : schedule_(schedule),
      platform_(platform),
      options_(options),
      network_(platform),
      program_(prepare_program(schedule)),
      flows_(network_) {
  if (platform.num_ranks() < schedule.num_ranks()) {
    throw std::invalid_argument(fmt::format("the schedule has {} ranks, the platform places {}",
                                            schedule.num_ranks(), platform.num_ranks()));
  }
  tstate_.assign(program_.send_op.size(), 0);
  for (std::size_t t = 0; t < tstate_.size(); ++t) {
    if (t == 0 || program_.last_in_channel[t - 1]) tstate_[t] |= kPrevLeft;
  }
  finish_.assign(static_cast<std::size_t>(schedule.num_ranks()), 0.0);
}

void Engine::push(double time, Kind kind, std::uint32_t version, std::uint32_t id) {
  const std::uint64_t payload = (static_cast<std::uint64_t>(kind) << 62) |
                                (static_cast<std::uint64_t>(version & 0x3fffffffu) << 32) | id;
  heap_.push_back({time, payload});
  std::push_heap(heap_.begin(), heap_.end(), [](const Event& a, const Event& b) { return later(a, b); });
}

int Engine::rank_of(std::uint32_t op) const {
  auto it = std::upper_bound(schedule_.rank_begin.begin(), schedule_.rank_begin.end(), op);
  return static_cast<int>(it - schedule_.rank_begin.begin()) - 1;
}

int Engine::lane_of(std::uint32_t t) const {
  const int a = schedule_.ops[program_.send_op[t]].lane;
  return a != kAnyLane ? a : schedule_.ops[program_.recv_op[t]].lane;
}

void Engine::make_ready(std::uint32_t op) {
  const Op& o = schedule_.ops[op];
  if (o.kind == OpKind::Copy) {
    start_copy(op);
    return;
  }
  const std::uint32_t t = program_.transfer[op];
  tstate_[t] |= (o.kind == OpKind::Send) ? kSendReady : kRecvReady;
  try_start(t);
}

void Engine::try_start(std::uint32_t t) {
  constexpr std::uint8_t need = kSendReady | kRecvReady | kPrevLeft;
  if ((tstate_[t] & (need | kStarted)) != need) return;
  tstate_[t] |= kStarted;
  if (options_.per_message_overhead_s > 0) {
    push(now_ + options_.per_message_overhead_s, kStart, 0, t);
  } else {
    start_transfer(t);
  }
}

void Engine::start_transfer(std::uint32_t t) {
  const std::uint64_t bytes = schedule_.ops[program_.send_op[t]].range.length;
  ++transfers_;
  bytes_ += bytes;
  if (bytes == 0) {
    transfer_left(t, now_);
    return;
  }
  const Path path = network_.transfer_path(sender(t), receiver(t), lane_of(t));
  const std::uint32_t f = flows_.add(path, bytes, now_, t);
  (void)f;
}

void Engine::start_copy(std::uint32_t op) {
  const std::uint64_t bytes = schedule_.ops[op].range.length;
  ++copies_;
  bytes_ += bytes;
  const int rank = rank_of(op);
  if (bytes == 0) {
    complete(op, rank);
    return;
  }
  flows_.add(network_.copy_path(rank), bytes, now_, op | kCopyTag);
}

void Engine::flow_ended(std::uint32_t f) {
  const std::uint32_t owner = flows_.owner(f);
  const double start = flows_.start_time(f);
  flows_.remove(f, now_);
  if (owner & kCopyTag) {
    const std::uint32_t op = owner & ~kCopyTag;
    const int rank = rank_of(op);
    if (options_.record_trace) {
      trace_.push_back({rank, rank, kTraceMemory, schedule_.ops[op].range.length, start, now_, now_});
    }
    complete(op, rank);
  } else {
    transfer_left(owner, start);
  }
}

void Engine::transfer_left(std::uint32_t t, double start) {
  const int from = sender(t);
  const int to = receiver(t);
  const std::uint64_t bytes = schedule_.ops[program_.send_op[t]].range.length;
  const Path path = network_.transfer_path(from, to, lane_of(t));
  const double arrive = now_ + path.latency_s;
  if (options_.record_trace) {
    const int lane = path.lane == -2 ? kTraceMemory : path.lane;
    trace_.push_back({from, to, lane, bytes, start, now_, arrive});
  }
  complete(program_.send_op[t], from);
  push(arrive, kDeliver, 0, program_.recv_op[t]);
  if (!program_.last_in_channel[t]) {
    tstate_[t + 1] |= kPrevLeft;
    try_start(t + 1);
  }
}

void Engine::complete(std::uint32_t op, int rank) {
  program_.waiting[op] = kDone;
  ++completed_;
  finish_[static_cast<std::size_t>(rank)] = std::max(finish_[static_cast<std::size_t>(rank)], now_);
  for (std::uint32_t i = program_.dep_begin[op]; i < program_.dep_begin[op + 1]; ++i) {
    const std::uint32_t d = program_.dep_list[i];
    if (--program_.waiting[d] == 0) ready_.push_back(d);
  }
}

void Engine::drain_ready() {
  while (!ready_.empty()) {
    const std::uint32_t op = ready_.back();
    ready_.pop_back();
    make_ready(op);
  }
}

void Engine::dispatch(const Event& e) {
  const auto kind = static_cast<Kind>(e.payload >> 62);
  const auto version = static_cast<std::uint32_t>((e.payload >> 32) & 0x3fffffffu);
  const auto id = static_cast<std::uint32_t>(e.payload & 0xffffffffu);
  switch (kind) {
    case kFlowEnd:
      if ((flows_.version(id) & 0x3fffffffu) == version) flow_ended(id);
      break;
    case kDeliver:
      complete(id, schedule_.ops[program_.send_op[program_.transfer[id]]].peer);
      break;
    case kStart:
      start_transfer(id);
      break;
  }
  drain_ready();
}

SimResult Engine::run() {
  const auto wall0 = std::chrono::steady_clock::now();
  for (std::uint32_t g = 0; g < schedule_.ops.size(); ++g) {
    if (program_.waiting[g] == 0) ready_.push_back(g);
  }
  std::reverse(ready_.begin(), ready_.end());  // start in program order
  drain_ready();
  const auto cmp = [](const Event& a, const Event& b) { return later(a, b); };
  for (;;) {
    if (flows_.has_dirty()) {
      flows_.reshare(now_);
      for (std::uint32_t f : flows_.changed()) push(flows_.finish_time(f), kFlowEnd, flows_.version(f), f);
    }
    if (heap_.empty()) break;
    now_ = heap_.front().time;
    while (!heap_.empty() && heap_.front().time == now_) {
      std::pop_heap(heap_.begin(), heap_.end(), cmp);
      const Event e = heap_.back();
      heap_.pop_back();
      ++events_;
      dispatch(e);
    }
  }
  check_all_done();
  SimResult result;
  fill_stats(result);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return result;
}

void Engine::check_all_done() const {
  if (completed_ == schedule_.ops.size()) return;
  for (std::uint32_t g = 0; g < schedule_.ops.size(); ++g) {
    if (program_.waiting[g] == kDone) continue;
    const int r = rank_of(g);
    const Op& op = schedule_.ops[g];
    throw std::runtime_error(fmt::format(
        "deadlock: {} of {} operations never completed; first: rank {} op {} ({} peer {}, {} "
        "unfinished dependencies)",
        schedule_.ops.size() - completed_, schedule_.ops.size(), r, g - schedule_.rank_begin[r],
        to_string(op.kind), op.peer, program_.waiting[g]));
  }
}

void Engine::fill_stats(SimResult& result) {
  flows_.finish(now_);
  result.rank_finish_s = finish_;
  result.time_s = finish_.empty() ? 0.0 : *std::max_element(finish_.begin(), finish_.end());
  for (std::uint32_t r = 0; r < network_.wan_base(); r += 2) {
    if (flows_.bytes(r) == 0 && flows_.bytes(r + 1) == 0) continue;
    const auto [node, lane] = network_.lane_of(r);
    result.lanes.push_back({node, lane, static_cast<std::uint64_t>(flows_.bytes(r) + 0.5),
                            static_cast<std::uint64_t>(flows_.bytes(r + 1) + 0.5), flows_.busy(r),
                            flows_.busy(r + 1)});
  }
  for (int l = 0; l < static_cast<int>(platform_.wan_links.size()); ++l) {
    const std::uint32_t ab = network_.wan_resource(l, 0), ba = network_.wan_resource(l, 1);
    result.wan.push_back({l, static_cast<std::uint64_t>(flows_.bytes(ab) + 0.5),
                          static_cast<std::uint64_t>(flows_.bytes(ba) + 0.5), flows_.busy(ab),
                          flows_.busy(ba), static_cast<int>(flows_.max_connections(ab)),
                          static_cast<int>(flows_.max_connections(ba))});
  }
  result.transfers = transfers_;
  result.copies = copies_;
  result.bytes = bytes_;
  result.events = events_;
  result.rate_updates = flows_.rate_updates();
  result.peak_flows = flows_.peak_active();
  result.trace = std::move(trace_);
}

}  // namespace multilane::sim

namespace multilane {

SimResult simulate(const Schedule& schedule, const Platform& platform, const SimOptions& options) {
  sim::Engine engine(schedule, platform, options);
  return engine.run();
}

}  // namespace multilane
