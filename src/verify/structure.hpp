// verify/structure.hpp — is the schedule well-formed enough to be executed at all?
//
// Checks the schedule's shape against the platform (rank count, root, index arrays) and then
// every operation: dependencies point to earlier operations of the same rank, peers are other
// valid ranks, ranges lie inside their buffers, copies have equal and disjoint ranges, nothing
// writes the read-only Send buffer, explicit lanes exist on the rank's node. Later checks rely
// on all of this, so they run only when it holds.
#pragma once

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "verify/report.hpp"

namespace multilane::verify {

// Returns true when no structural error was found (errors go to `sink`).
bool check_structure(const Schedule& schedule, const Platform& platform, ErrorSink& sink);

}  // namespace multilane::verify
