// runtime/shm/root_share.hpp — how much of the other ranks' blocks the root of a single-copy
// bcast, scatter or gather copies itself, balanced from the times of the calls.
//
//   std::uint16_t share = balancer.choose(call, serial);   // every rank, before its plan
//   endpoint.time_copies(balancer.wants_timing());
//   ...run the plan: every rank leaves how long it copied in its RankRecord...
//   balancer.finished();                                    // every rank; the root learns
//
// In a single-copy rooted call (plan_single_copy.cpp) every other rank copies its block once,
// through the kernel, and the root copies its own block (scatter, gather) from cache. A root
// that only did that would then wait, so it also copies the last `share` bytes of every other
// rank's block, and the call takes as long as the slower side: the root (its own block and
// p - 1 shares) or the others (their block less the share). Where the two balance is not a
// constant of the machine but of the calls: a root whose buffers no longer fit its cache copies
// its own block at half the speed, so calls back to back balance at a much smaller share than
// calls whose buffers come in cold (docs/shared-memory.md, "The root learns its share").
//
// A share also has a fixed price: every rank must expose its buffer and wait for every other,
// and the root makes system calls of its own. Below about 32 KiB that price can exceed what
// balancing saves: bcast and scatter of 8-32 KiB on 2 ranks are faster without a share (the
// plan in which only the root exposes), gather of 32 KiB is faster with one
// (docs/shared-memory.md, "Whether a share pays"). So the root also times its whole calls and
// learns with a PlanLearner (plan_learner.hpp, as the copy path is learned) whether its calls
// are faster with a share (SharePlan::With, at the balanced share) or without one
// (SharePlan::Without, share 0). A round of the learner starts only in calls shorter than
// kProbeBelow: there the fixed price counts. A
// balance that reaches 0 stays there (at 0 it would always ask for a share, since the root then
// copies nothing), and the two plans are then one: a balance of 0 means no rank but the root
// exposes, which is cheaper than the smallest share with every rank exposing.
//
// So the root measures, as STAR-MPI does for its algorithms and copy_chooser.hpp for the copy
// path. Every rank times its copying, from the stage's sync to its last copy, and stores the time
// in its RankRecord before it releases the stage; the root, once every rank released, reads
// them. From the medians of `kSamples` calls at one share it moves the share by half the step
// that would make the root and the slowest other rank finish together, taking the others'
// time per byte for both sides (propose_root_share()).
//
// Why the ranks agree without talking: the share of call S rooted by rank X is a versioned
// choice (versioned_choice.hpp), one word of X's RootRecord per class (collective and
// power-of-two block size); 0 means "nothing learned", the default (default_root_share()). X,
// the decider, meets that file's two conditions so:
// 1. It writes the word before its first sync of the call, and every rank waits for that sync
//    (both single-copy rooted plans make it).
// 2. It waits for every rank at the end of every call it roots, so no rank is still to read
//    the older value when it changes the word again.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/plan_learner.hpp"
#include "runtime/shm/versioned_choice.hpp"

namespace multilane::runtime::shm {

// A share is counted in 1/1024ths of a block (bcast: of the message), and copied in whole
// cache lines.
inline constexpr std::uint32_t kShareUnits = 1024;
// The largest share: all of every other block (the others then only expose their buffers,
// which is where a gather of 8-128 KiB on 2 ranks balances: a process_vm_writev costs the
// other rank more than the root's process_vm_readv of the same bytes).
inline constexpr std::uint32_t kMaxShare = kShareUnits;

// Whether `call` is a single-copy bcast, scatter or gather whose root shares the copying.
bool has_root_share(const CallShape& call);
// The share before anything is learned: bcast's root has no block of its own and takes 1/p;
// scatter's and gather's copy theirs from cache, for about a quarter of a copy through the
// kernel, and take 3/4 of 1/p.
std::uint16_t default_root_share(Collective collective, int local_size);
// The bytes at the end of every other rank's block that the root copies (call.root_share, or
// the default), whole cache lines.
std::uint64_t root_share_bytes(const CallShape& call);
// The same for a block of `size` bytes and a share of `share` units.
std::uint64_t share_bytes(std::uint64_t size, std::uint16_t share);

// The share that balances the root and the others, from one measured call or the medians of
// several at `share`: half the step towards where both finish together, at most 1/16 of a block,
// within 0..kMaxShare; `share` itself when the step is below 2 units. The time per byte is
// the others' (of the bytes they copy), or the root's when the others copy (almost) nothing.
std::uint16_t propose_root_share(std::uint16_t share, std::uint64_t size, int local_size,
                                 double root_seconds, double others_seconds);

// Whether a single-copy rooted call's root shares the copying, as PlanLearner's plans.
enum class SharePlan : bool { Without, With };

// A class's word, unpacked: `valid` false means "nothing learned yet" (the default decides).
using ShareChoice = VersionedChoice<std::uint16_t>;
std::uint64_t pack(const ShareChoice& choice);
ShareChoice unpack_share(std::uint64_t word);

// The class of a call with a root's share, or nullopt.
std::optional<std::size_t> root_share_class(const CallShape& call);

class RootShareBalancer {
 public:
  static constexpr int kSamples = 5;  // calls per share; their medians are compared
  // The pace of learning whether a share pays: rounds of kSamples calls with and without,
  // rests of 10 to 320 calls, and the other plan must be 5% faster.
  static constexpr PlanLearning kSharePays{.samples = kSamples,
                                           .first_period = 2 * kSamples,
                                           .last_period = 64 * kSamples,
                                           .margin = 0.05};
  // Rounds start only in calls shorter than this many seconds: in longer ones the fixed price
  // of a share hardly counts, and the root's view of its calls misleads more than it tells (its
  // probes of a 2-rank bcast of 128 KiB chose what shm_bench then found slower); in calls of up
  // to a few microseconds the probes pay.
  static constexpr double kProbeBelow = 4e-6;

  // `view`: the group's segment; `learns`: whether this rank changes the shares of the calls
  // it roots (each rank may decide for itself: the others only read).
  RootShareBalancer(const SegmentView& view, int local_rank, bool learns);

  // The share of call `serial`, one with has_root_share(). Every rank calls it; the call's root
  // first publishes a change it has learned.
  std::uint16_t choose(const CallShape& call, std::uint64_t serial);
  // Call `serial` has no root's share.
  void pass() { current_.reset(); }
  // The share call `serial` would take if it were `call` (for reports; changes nothing).
  std::uint16_t share_of(const CallShape& call, std::uint64_t serial) const;
  // Whether the call just chosen should be timed (endpoint.hpp: ShmEndpoint::time_copies).
  bool wants_timing() const { return current_.has_value(); }
  // The call just chosen ended on this rank after `call_time` (the root's whole call, from
  // choose() on); its root reads every rank's copy time.
  void finished(std::chrono::nanoseconds call_time);

  // Shares this rank published (for tests and reports).
  int changes() const { return changes_; }

 private:
  struct Call {
    std::size_t share_class = 0;
    std::uint64_t serial = 0;
    std::uint16_t share = 0;
    std::uint64_t size = 0;
    int local_size = 1;
    bool root = false;  // this rank is the call's root
  };
  struct Learning {
    std::uint16_t share = 0;  // the share the samples were taken at
    std::vector<double> root_seconds, others_seconds;
    // SharePlan::With's share: the first call's, then balanced.
    std::optional<std::uint16_t> balanced;
    std::optional<PlanLearner<SharePlan>> share_pays;  // With: `balanced`; Without: share 0
    std::optional<std::uint16_t> proposal;  // published at this rank's next call of the class
  };
  // Moves the balanced share after a call at `call.share` that took these copy times.
  static void balance(Learning& learning, const Call& call, double root_seconds,
                      double others_seconds);
  std::uint64_t& word(int root, std::size_t share_class) const;
  // The share of call `serial` of class `share_class` rooted by call.root.
  std::uint16_t share_in(std::size_t share_class, const CallShape& call,
                         std::uint64_t serial) const;
  // The root's and the slowest other rank's copy times of `call`, if every rank left them.
  std::optional<std::pair<double, double>> times(const Call& call) const;

  // Every call touches current_ (pass() at least); the learning comes last, so that a call
  // without a share brings one cache line of this object back, not a few.
  std::optional<Call> current_;  // the call just chosen, if it has a root's share
  SegmentView view_;
  int local_rank_;
  bool learns_;
  int changes_ = 0;
  std::array<Learning, kRootShareWords> learning_;
};

}  // namespace multilane::runtime::shm
