// tests/shm/in_process.hpp — runs the plans of every rank of a group in one process.
//
// The ranks share a segment in ordinary memory and run their steps one at a time; at each turn a
// random rank whose next step is startable performs it, so every run is one legal interleaving of
// the real, concurrent ranks (a step's bytes are only touched by steps its sync orders it with); a
// writer in flagged lines may stamp them at one turn and arrive at a later one, as a real writer
// may be held up between the two. Each rank builds each call's plan with its own StageClock when it
// gets to the call, as real ranks do, so ranks drift apart by whole calls. A run fails when no rank
// can move before all finished (a deadlock), when a rank's result is wrong, or when ranks disagree
// on the stages of a call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/shm/plan.hpp"

namespace multilane::runtime::shm::testing {

struct PlannedCall {
  CallShape shape;  // shape.local_size: the group's size
  Geometry geometry;
};

// "" if every rank finished every call with exactly the right bytes, else what went wrong.
std::string run_in_process(int ranks, const std::vector<PlannedCall>& calls, std::uint32_t seed);

// The plan of one rank for one call on a fresh clock.
ShmPlan plan_of(const CallShape& shape, int rank, const Geometry& geometry);

}  // namespace multilane::runtime::shm::testing
