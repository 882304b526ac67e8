// bench/simgrid_replay.hpp — a multilane Schedule replayed in SimGrid as S4U activities.
//
// Every transfer becomes one host-to-host Comm per lane it uses (Comm::sendto_init between the
// lane hosts of simgrid_platform.hpp; a kAnyLane transfer is cut evenly over the lanes both nodes
// have, at most 8, as multilane's simulator stripes it), every Copy an Exec on the node's memory
// host. Matching is the schedule's rule: the k-th Send of a to b is the k-th Recv of b from a, one
// FIFO channel per ordered pair, so the comms of transfer k start when the Send's dependencies,
// the Recv's dependencies and transfer k-1 of the pair have completed. The replay counts those
// dependencies itself and starts each activity from SimGrid's completion callback
// (Activity::on_completion) the moment it may start, so only activities in flight exist — as with
// an actor per rank, without the actors' context switches. (Not the S4U activity-dependency API
// with the whole graph created up front: SimGrid 3.32 keeps every unfinished host-to-host comm in
// one list that each completion walks, which makes that quadratic. Not mailboxes: a mailbox comm
// travels between the hosts of its two actors and so cannot pick a NIC.)
//
// Latency, two ways:
//   Overlapped   multilane's channel semantics. The data comms get latency factor 0 (bytes move at
//                once, still bounded by TCP-gamma / (2 x route latency), and shared with the
//                same weight as every other flow); the Recv completes when a zero-byte comm on
//                the same route, which costs exactly the route latency, has followed the data.
//                So the next segment of a pair leaves right behind the previous one and a
//                pipeline pays the latency once.
//   PerMessage   SimGrid's own CM02 semantics: a comm waits its route latency, then moves its
//                bytes; transfer k+1 of a pair starts when transfer k has arrived, so a pipeline
//                pays the latency once per segment, and CM02 shares a link in inverse proportion
//                to each flow's route latency (TCP's RTT unfairness).
//
// Not supported (UsageError): messages between ranks on the same node (shared memory).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane::simgrid_peer {

enum class LatencyMode { Overlapped, PerMessage };
std::string_view to_string(LatencyMode mode);

struct ReplayResult {
  double time_s = 0;                  // completion time: max over ranks
  std::vector<double> rank_finish_s;  // per rank: completion of its last operation
  std::uint64_t comms = 0;            // SimGrid comms started (data and latency)
  std::uint64_t execs = 0;            // SimGrid execs started (copies)
  double setup_s = 0;                 // wall: SimGrid platform and the replay's bookkeeping
  double run_s = 0;                   // wall: Engine::run, the simulation proper
  double run_cpu_s = 0;               // CPU time of Engine::run (the machine may be shared)
};

// The result as one line of text and back, exactly (hex floats): how a child process that ran the
// replay reports it. decode_result throws std::runtime_error on a text it cannot read.
std::string encode_result(const ReplayResult& result);
ReplayResult decode_result(const std::string& text);

// Creates a SimGrid engine, configures it (simgrid_settings), builds the platform, replays the
// schedule and reports. SimGrid's engine is one per process and cannot be created
// again: call this at most once per process (simgrid_child.hpp runs it in a child process).
// Throws UsageError when the platform cannot carry the schedule (no WAN link, a missing lane,
// shared memory), std::invalid_argument when the schedule breaks the matching rule, and
// std::runtime_error naming an operation that never completed.
ReplayResult replay_in_simgrid(const Schedule& schedule, const Platform& platform,
                               LatencyMode mode);

}  // namespace multilane::simgrid_peer
