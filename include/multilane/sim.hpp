// multilane/sim.hpp — discrete-event, flow-level simulation of a schedule on a platform.
//
// The simulator runs the very schedules the runtime executes (schedule.hpp) on a model of the
// platform (platform.hpp). Semantics, in short (docs/simulator.md has the details):
//
//   * An operation is ready when its dependencies have completed.
//   * The k-th transfer on the ordered pair (a,b) starts when its Send and its Recv are both
//     ready and transfer k-1 on that pair has finished leaving the sender (one FIFO channel per
//     pair: the next segment of a pipeline starts as soon as the previous one has left the lane,
//     so latency overlaps and a pipeline pays it once).
//   * A transfer is a flow through resources: the sender's lane(s) up, the receiver's lane(s)
//     down, and across sites the WAN link (aggregate bandwidth, one direction) plus a per-flow
//     cap b_WAN(P) where P is the number of connections crossing that link direction now.
//     Ranks on the same node exchange messages through the node's memory (two copies, shm sync
//     latency). Copies are flows through the node's memory at one core's copy bandwidth.
//   * Concurrent flows share resources max-min fairly (progressive filling with per-flow caps).
//   * The Send completes when the bytes have left the sender; the Recv completes one latency
//     (LAN, WAN or shm sync) later. With a per-message overhead o, a transfer starts moving
//     bytes o after it became startable.
//   * Lanes: op.lane names the NIC on both ends; kAnyLane stripes the transfer evenly over every
//     lane index both nodes have (weight 1/k on each of the k lanes, k connections on a WAN).
//
// Not modelled: TCP slow start and congestion control dynamics, loss and retransmission,
// switch buffers, CPU time of the ranks, memory of the ranks.
//
// Cost: O(E + F·C) time, plus a linear radix sort of the events of each instant, for E events
// and F flow starts/ends whose connected components (flows sharing resources, transitively)
// have C resources and flows (C = 1 for a flow alone on its resources, which takes a direct
// path); O(ops + deps + ranks + lanes + peak flows) memory in flat arrays, independent of
// message sizes. docs/simulator.md has the data structures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

struct SimOptions {
  double per_message_overhead_s = 0;  // added once per transfer, before its bytes move
  bool record_trace = false;          // fill SimResult::trace (one slice per transfer/copy)
};

// Traffic through one lane of one node (only lanes that carried bytes are reported).
struct LaneStats {
  int node = 0;
  int lane = 0;
  std::uint64_t bytes_up = 0;
  std::uint64_t bytes_down = 0;
  double busy_up_s = 0;    // time with at least one flow leaving through the lane
  double busy_down_s = 0;  // time with at least one flow arriving through the lane
};

// Traffic through one WAN link, per direction (a->b is site_a to site_b of the WanLink).
struct WanStats {
  int link = 0;  // index into Platform::wan_links
  std::uint64_t bytes_ab = 0;
  std::uint64_t bytes_ba = 0;
  double busy_ab_s = 0;
  double busy_ba_s = 0;
  int max_connections_ab = 0;  // peak number of concurrent connections
  int max_connections_ba = 0;
};

inline constexpr int kTraceStriped = -1;  // TraceSlice::lane of a kAnyLane transfer
inline constexpr int kTraceMemory = -2;   // TraceSlice::lane of a copy or shared-memory message

// One transfer (or copy): bytes move from `start_s` to `left_s`, and are delivered at
// `arrive_s` (left_s plus the latency). For copies peer == rank and arrive_s == left_s.
struct TraceSlice {
  int rank = 0;
  int peer = 0;
  int lane = 0;
  std::uint64_t bytes = 0;
  double start_s = 0;
  double left_s = 0;
  double arrive_s = 0;
};

struct SimResult {
  double time_s = 0;                  // completion time: max over ranks
  std::vector<double> rank_finish_s;  // per rank: completion of its last operation
  std::vector<LaneStats> lanes;
  std::vector<WanStats> wan;
  std::uint64_t transfers = 0;  // Send/Recv pairs executed
  std::uint64_t copies = 0;
  std::uint64_t bytes = 0;         // bytes moved by transfers and copies
  std::uint64_t events = 0;        // events popped from the event queue
  std::uint64_t rate_updates = 0;  // flow rate changes computed by the fair-sharing step
  std::size_t peak_flows = 0;      // largest number of concurrent flows
  double wall_s = 0;               // wall-clock time of simulate() (preparation and events)
  std::vector<TraceSlice> trace;   // when SimOptions::record_trace
};

// Simulates `schedule` on `platform` (whose ranks must cover the schedule's). Throws UsageError
// when the platform cannot carry the schedule (no WAN link between two sites that exchange
// messages, a lane the node does not have), std::invalid_argument when the schedule breaks the
// matching rule, and std::runtime_error naming a stuck operation when it deadlocks.
SimResult simulate(const Schedule& schedule, const Platform& platform,
                   const SimOptions& options = {});

// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): one process per rank, one
// thread per lane of that rank ("lane i", "striped", "memory"), one complete ("X") slice per
// transfer on the sender's track (from start to delivery) and per copy.
std::string trace_to_json(const SimResult& result, const Platform& platform,
                          const std::string& title);

}  // namespace multilane
