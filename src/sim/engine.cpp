#include "sim/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "schedule/group_call.hpp"
#include "sim/reduction_lowering.hpp"

namespace multilane::sim {

namespace {
constexpr std::uint8_t kSendReady = 1, kRecvReady = 2, kPrevLeft = 4, kStarted = 8;
constexpr std::uint32_t kVersionMask = 0x3fffffffu;  // the version bits an event key keeps
}  // namespace

Engine::Engine(const Schedule& schedule, const Platform& platform, const SimOptions& options,
               std::span<const std::uint8_t> copied_once)
    : wall0_(std::chrono::steady_clock::now()),
      schedule_(schedule),
      platform_(platform),
      options_(options),
      network_(platform),
      program_(prepare_program(schedule)),
      flows_(network_) {
  if (platform.num_ranks() < schedule.num_ranks()) {
    throw std::invalid_argument(fmt::format("the schedule has {} ranks, the platform places {}",
                                            schedule.num_ranks(), platform.num_ranks()));
  }
  auto& transfers = program_.transfers;
  for (std::size_t t = 0; t < transfers.size(); ++t) {
    if (t == 0 || transfers[t - 1].last_in_channel) transfers[t].state |= kPrevLeft;
    if (!copied_once.empty()) transfers[t].copied_once = copied_once[transfers[t].send_op];
  }
  finish_.assign(static_cast<std::size_t>(schedule.num_ranks()), 0.0);
  flows_.reserve(transfers.size() + program_.copies);
}

// Key: kind (2 bits), version (30 bits, flow ends only), id (32 bits: flow, recv op or
// transfer). Events of one instant pop in key order.
void Engine::push(double time, Kind kind, std::uint32_t version, std::uint32_t id) {
  queue_.push(time, (static_cast<std::uint64_t>(kind) << 62) |
                        (static_cast<std::uint64_t>(version & kVersionMask) << 32) | id);
}

int Engine::rank_of(std::uint32_t op) const {
  auto it = std::upper_bound(schedule_.rank_begin.begin(), schedule_.rank_begin.end(), op);
  return static_cast<int>(it - schedule_.rank_begin.begin()) - 1;
}

void Engine::make_ready(std::uint32_t op) {
  const std::uint32_t link = program_.ops[op].link;
  if (link & kCopyOp) {
    start_copy(op, static_cast<int>(link & ~kCopyOp));
    return;
  }
  Transfer& tr = program_.transfers[link];
  tr.state |= (tr.send_op == op) ? kSendReady : kRecvReady;
  try_start(link);
}

void Engine::try_start(std::uint32_t t) {
  constexpr std::uint8_t need = kSendReady | kRecvReady | kPrevLeft;
  std::uint8_t& state = program_.transfers[t].state;
  if ((state & (need | kStarted)) != need) return;
  state |= kStarted;
  if (options_.per_message_overhead_s > 0) {
    push(now_ + options_.per_message_overhead_s, kStart, 0, t);
  } else {
    start_transfer(t);
  }
}

void Engine::start_transfer(std::uint32_t t) {
  const Transfer& tr = program_.transfers[t];
  ++transfers_;
  bytes_ += tr.bytes;
  const Path path = network_.transfer_path(tr.from, tr.to, tr.lane, tr.copied_once != 0);
  if (tr.bytes == 0) {
    transfer_left(t, now_, path.latency_s, path.lane);
    return;
  }
  note_start(flows_.add(path, tr.bytes, now_, t));
}

// Traces need each flow's start time; without one nothing is kept.
void Engine::note_start(std::uint32_t f) {
  if (!options_.record_trace) return;
  if (f >= flow_start_.size()) flow_start_.resize(f + 1);
  flow_start_[f] = now_;
}

void Engine::start_copy(std::uint32_t op, int rank) {
  std::uint64_t bytes = schedule_.ops[op].range.length;
  if (schedule_.ops[op].kind == OpKind::Reduce) {
    // A reduction is priced on the copy path, as the bytes a copy would move in its time.
    const SharedMemory& shm = platform_.sites[platform_.site_of(rank)].shm;
    bytes = static_cast<std::uint64_t>(static_cast<double>(bytes) * shm.copy_bps / shm.reduce_bps);
  }
  ++copies_;
  bytes_ += bytes;
  if (bytes == 0) {
    complete(op, rank);
    return;
  }
  note_start(flows_.add(network_.copy_path(rank), bytes, now_, op | kCopyOp));
}

void Engine::flow_ended(std::uint32_t f) {
  const std::uint32_t owner = flows_.owner(f);
  const double start = options_.record_trace ? flow_start_[f] : 0.0;
  const double latency = flows_.latency(f);
  const int lane = flows_.lane(f);
  flows_.remove(f, now_);
  if (owner & kCopyOp) {
    const std::uint32_t op = owner & ~kCopyOp;
    const int rank = static_cast<int>(program_.ops[op].link & ~kCopyOp);
    if (options_.record_trace) {
      trace_.push_back(
          {rank, rank, kTraceMemory, schedule_.ops[op].range.length, start, now_, now_});
    }
    complete(op, rank);
  } else {
    transfer_left(owner, start, latency, lane);
  }
}

// The last byte of transfer t has left the sender: its Send completes now, its Recv one
// latency later, and the next transfer of the channel may start.
void Engine::transfer_left(std::uint32_t t, double start, double latency, int lane) {
  const Transfer& tr = program_.transfers[t];
  const double arrive = now_ + latency;
  if (options_.record_trace) {
    trace_.push_back({tr.from, tr.to, lane, tr.bytes, start, now_, arrive});
  }
  complete(tr.send_op, tr.from);
  push(arrive, kDeliver, 0, tr.recv_op);
  if (!tr.last_in_channel) {
    program_.transfers[t + 1].state |= kPrevLeft;
    try_start(t + 1);
  }
}

void Engine::complete(std::uint32_t op, int rank) {
  OpState* ops = program_.ops.data();
  ops[op].waiting = kOpDone;
  ++completed_;
  double& finish = finish_[static_cast<std::size_t>(rank)];
  finish = std::max(finish, now_);
  for (std::uint32_t i = ops[op].dep_begin; i < ops[op + 1].dep_begin; ++i) {
    const std::uint32_t d = program_.dep_list[i];
    if (--ops[d].waiting == 0) ready_.push_back(d);
  }
}

void Engine::drain_ready() {
  while (!ready_.empty()) {
    const std::uint32_t op = ready_.back();
    ready_.pop_back();
    make_ready(op);
  }
}

void Engine::dispatch(EventQueue::Event e) {
  const auto kind = static_cast<Kind>(e.key >> 62);
  const auto version = static_cast<std::uint32_t>((e.key >> 32) & kVersionMask);
  const auto id = static_cast<std::uint32_t>(e.key & 0xffffffffu);
  switch (kind) {
    case kFlowEnd:
      if ((flows_.version(id) & kVersionMask) == version) flow_ended(id);
      break;
    case kDeliver:
      complete(id, program_.transfers[program_.ops[id].link].to);
      break;
    case kStart:
      start_transfer(id);
      break;
  }
  drain_ready();
}

SimResult Engine::run() {
  for (std::uint32_t g = 0; g < schedule_.ops.size(); ++g) {
    if (program_.ops[g].waiting == 0) ready_.push_back(g);
  }
  std::reverse(ready_.begin(), ready_.end());  // start in program order
  drain_ready();
  for (;;) {
    if (flows_.has_dirty()) {
      flows_.reshare(now_);
      for (std::uint32_t f : flows_.changed())
        push(flows_.finish_time(f), kFlowEnd, flows_.version(f), f);
    }
    if (queue_.empty()) break;
    now_ = queue_.next_time();
    do {
      ++events_;
      dispatch(queue_.pop());
    } while (queue_.in_instant());
  }
  check_all_done();
  SimResult result;
  fill_stats(result);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  return result;
}

void Engine::check_all_done() const {
  if (completed_ == schedule_.ops.size()) return;
  for (std::uint32_t g = 0; g < schedule_.ops.size(); ++g) {
    if (program_.ops[g].waiting == kOpDone) continue;
    const int r = rank_of(g);
    const Op& op = schedule_.ops[g];
    throw std::runtime_error(fmt::format(
        "deadlock: {} of {} operations never completed; first: rank {} op {} ({} peer {}, {} "
        "unfinished dependencies)",
        schedule_.ops.size() - completed_, schedule_.ops.size(), r, g - schedule_.rank_begin[r],
        to_string(op.kind), op.peer, program_.ops[g].waiting));
  }
}

void Engine::fill_stats(SimResult& result) {
  result.time_s = finish_.empty() ? 0.0 : *std::max_element(finish_.begin(), finish_.end());
  result.rank_finish_s = std::move(finish_);
  // At most one entry per lane; reserving that much costs no memory until written.
  result.lanes.reserve(network_.wan_base() / 2);
  for (int node = 0; node < network_.num_nodes(); ++node) {
    for (int lane = 0; lane < network_.lanes_of_node(node); ++lane) {
      const std::uint32_t up = network_.lane_resource(node, lane, true);
      const std::uint32_t down = network_.lane_resource(node, lane, false);
      if (flows_.bytes(up) == 0 && flows_.bytes(down) == 0) continue;
      result.lanes.push_back({node, lane, static_cast<std::uint64_t>(flows_.bytes(up) + 0.5),
                              static_cast<std::uint64_t>(flows_.bytes(down) + 0.5),
                              flows_.busy(up, now_), flows_.busy(down, now_)});
    }
  }
  for (int l = 0; l < static_cast<int>(platform_.wan_links.size()); ++l) {
    const std::uint32_t ab = network_.wan_resource(l, 0), ba = network_.wan_resource(l, 1);
    result.wan.push_back({l, static_cast<std::uint64_t>(flows_.bytes(ab) + 0.5),
                          static_cast<std::uint64_t>(flows_.bytes(ba) + 0.5), flows_.busy(ab, now_),
                          flows_.busy(ba, now_), static_cast<int>(flows_.max_connections(ab)),
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
  if (sim::has_recv_reduce(schedule)) {
    return simulate(sim::lower_recv_reduce(schedule), platform, options);
  }
  if (has_group_ops(schedule)) {
    // Group calls run as their moves, each an intra-node transfer (schedule/group_call.hpp),
    // copied once where the runtime would.
    const LoweredGroupCalls lowered = lower_group_calls(schedule, platform);
    sim::Engine engine(lowered.schedule, platform, options, lowered.copied_once);
    return engine.run();
  }
  sim::Engine engine(schedule, platform, options);
  return engine.run();
}

}  // namespace multilane
