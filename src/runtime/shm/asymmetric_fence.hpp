// runtime/shm/asymmetric_fence.hpp — a full fence paid by the rank that goes to sleep, not by
// the rank that wakes it.
//
// A rank that publishes a SyncWord stores the value and then reads whether anyone sleeps on it;
// a rank about to sleep counts itself as a sleeper and then reads the value again. Without a
// full fence between the store and the load on both sides, both may read the old state and
// the sleeper misses its wake-up (x86 lets a load pass an earlier store). A fence on the
// publishing side is an atomic read-modify-write that stalls until the line is the core's
// own: on a small call that stall is most of the call's time, twice (the writer's `filled`,
// the reader's `drained`). Sleeping is rare and slow anyway, so the sleeper pays for both
// instead: membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) runs a full fence on every CPU that runs
// a thread of a process registered for it (a fraction of a microsecond on this VM), which orders
// every registered publisher's store before its load as seen by the sleeper (sync_word.cpp).
//
// Only processes registered with the kernel get that fence, so a group may publish without a
// fence only if all of its ranks registered (attach.cpp counts the refusals).
#pragma once

namespace multilane::runtime::shm {

// Registers this process for the sleeper's fence (once per process; later calls return the
// first answer). False when the kernel does not offer it (older than 4.16, or a sandbox).
bool register_for_asymmetric_fence();

// The sleeper's side: a full fence on every CPU that runs a registered process. False if the
// kernel refused (then the sleeper must not sleep: it cannot be sure to be woken).
bool asymmetric_fence_heavy();

}  // namespace multilane::runtime::shm
