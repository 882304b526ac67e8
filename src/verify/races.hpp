// verify/races.hpp — the outcome must not depend on which ready operation runs first.
//
// Within a rank, operations whose dependencies are complete may run in any order (or at
// once). So every pair of operations touching a common byte, at least one of them writing
// it, must be ordered by (transitive) dependencies:
//   read after write   a Send or Copy reading bytes depends on the op that last wrote them;
//   write after write  a write depends on the op that last wrote the same bytes;
//   write after read   a write depends on every op that read those bytes since then.
// Checking against the last writer and the readers since it is enough: the rest follows by
// transitivity. Walks each rank's program once, in program order (a topological order).
#pragma once

#include "multilane/schedule.hpp"
#include "verify/report.hpp"

namespace multilane::verify {

void check_races(const Schedule& schedule, ErrorSink& sink);

}  // namespace multilane::verify
