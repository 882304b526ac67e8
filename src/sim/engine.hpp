// sim/engine.hpp — the discrete-event loop that executes a prepared program on the flows.
//
// Events live in a radix heap (event_queue.hpp) ordered by (time, key): a flow's projected
// end (stale ones are recognised by the flow's version and skipped), a message's delivery (its
// Recv completes), and a transfer's start after the per-message overhead. All events of one
// instant are applied first, then the fair-sharing step recomputes the touched components
// once, so a thousand flows starting together cost one reshare per component.
//
// Per transfer the loop touches its Transfer record, the OpState of its two operations and
// their dependents, one flow record with its slots, the resources of its path and the heap;
// a flow carries its path's latency, so the path is computed once per transfer.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "multilane/sim.hpp"
#include "sim/event_queue.hpp"
#include "sim/flows.hpp"
#include "sim/network.hpp"
#include "sim/program.hpp"

namespace multilane::sim {

class Engine {
 public:
  // `copied_once`: per op of `schedule`, whether it moves bytes the runtime copies once (from
  // lower_group_calls); empty: none.
  Engine(const Schedule& schedule, const Platform& platform, const SimOptions& options,
         std::span<const std::uint8_t> copied_once = {});
  SimResult run();

 private:
  enum Kind : std::uint64_t { kFlowEnd = 0, kDeliver = 1, kStart = 2 };
  void push(double time, Kind kind, std::uint32_t version, std::uint32_t id);
  void dispatch(EventQueue::Event e);
  void make_ready(std::uint32_t op);
  void try_start(std::uint32_t transfer);
  void start_transfer(std::uint32_t transfer);
  void start_copy(std::uint32_t op, int rank);
  void note_start(std::uint32_t flow);
  void flow_ended(std::uint32_t flow);
  void transfer_left(std::uint32_t transfer, double start, double latency, int lane);
  void complete(std::uint32_t op, int rank);
  void drain_ready();
  int rank_of(std::uint32_t op) const;
  void check_all_done() const;
  void fill_stats(SimResult& result);

  std::chrono::steady_clock::time_point wall0_;  // first: the wall time covers preparation
  const Schedule& schedule_;
  const Platform& platform_;
  SimOptions options_;
  Network network_;
  Program program_;
  Flows flows_;
  EventQueue queue_;
  std::vector<std::uint32_t> ready_;  // ops that became ready, to be started
  std::vector<double> finish_;
  double now_ = 0;
  std::uint64_t events_ = 0, transfers_ = 0, copies_ = 0, bytes_ = 0, completed_ = 0;
  std::vector<TraceSlice> trace_;
  std::vector<double> flow_start_;  // per flow, when tracing
};

}  // namespace multilane::sim
