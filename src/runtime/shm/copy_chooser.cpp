#include "runtime/shm/copy_chooser.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "runtime/shm/call_record.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::uint64_t kValid = 1;
constexpr std::uint64_t kOldOnce = 2;
constexpr std::uint64_t kNewOnce = 4;
constexpr std::uint64_t kTiming = 8;
constexpr int kSerialShift = 4;

// Blocks of 4 KiB (2^12) up to 1 MiB: below, copying twice won on every machine and state we
// measured, by 2-3x; above, both paths copy at memory speed and the kernel copy always won.
constexpr int kSmallestClass = 12;
// The learned collectives, in the order of their classes (kCopyChoiceClasses words each): the
// first two in the header's words, the others in their roots' records. Bcast and scatter learn
// blocks below 64 KiB only (4 classes): from there the root's share makes one copy 1.4x faster
// than two on 2 ranks and more on 4, and probing two copies only cost (4 oversubscribed ranks,
// scatter of 256 KiB: 5-10% slower medians with the probes).
struct Learned {
  Collective collective;
  int classes;  // power-of-two block sizes from 2^kSmallestClass
};
constexpr std::array<Learned, 4> kLearned = {{{Collective::Alltoall, 8},
                                              {Collective::Allgather, 8},
                                              {Collective::Bcast, 4},
                                              {Collective::Scatter, 4}}};
static_assert(kCopyChoiceWords + kRootedCopyChoiceWords == kLearned.size() * kCopyChoiceClasses);

bool rooted(std::size_t size_class) {
  return size_class >= kCopyChoiceWords;
}

}  // namespace

std::uint64_t pack(const CopyChoice& choice) {
  if (!choice.valid) return 0;
  return kValid | (choice.old_value == CopyPath::Once ? kOldOnce : 0) |
         (choice.new_value == CopyPath::Once ? kNewOnce : 0) | (choice.timing ? kTiming : 0) |
         choice.from_serial << kSerialShift;
}

CopyChoice unpack_choice(std::uint64_t word) {
  CopyChoice choice;
  choice.valid = (word & kValid) != 0;
  choice.old_value = path_of((word & kOldOnce) != 0);
  choice.new_value = path_of((word & kNewOnce) != 0);
  choice.timing = (word & kTiming) != 0;
  choice.from_serial = word >> kSerialShift;
  return choice;
}

std::optional<std::size_t> copy_choice_class(const CallShape& call) {
  const auto* learned = std::find_if(kLearned.begin(), kLearned.end(), [&](const Learned& l) {
    return l.collective == call.collective;
  });
  if (learned == kLearned.end() || call.size == 0) return std::nullopt;
  const auto collective = static_cast<std::size_t>(learned - kLearned.begin());
  const int size_class = std::bit_width(call.size) - 1 - kSmallestClass;
  if (size_class < 0 || size_class >= learned->classes) return std::nullopt;
  return collective * kCopyChoiceClasses + static_cast<std::size_t>(size_class);
}

CopyChooser::CopyChooser(const SegmentView& view, int local_rank, bool enabled,
                         const PlanLearning& policy)
    : enabled_(enabled), local_rank_(local_rank), view_(view), policy_(policy) {}

PlanLearner<CopyPath>& CopyChooser::learner(std::size_t size_class, CopyPath path) {
  std::optional<PlanLearner<CopyPath>>& learner = learners_[size_class];
  if (!learner) learner.emplace(path, policy_);
  return *learner;
}

std::uint64_t& CopyChooser::word(const CallShape& call, std::size_t size_class) const {
  if (!rooted(size_class)) return view_.header->copy_choices[size_class];
  return view_.roots[static_cast<std::size_t>(call.root)]
      .copy_choices[size_class - kCopyChoiceWords];
}

bool CopyChooser::learns(const CallShape& call, bool can_copy_once) const {
  return enabled_ && can_copy_once && copy_choice_class(call).has_value();
}

bool CopyChooser::choose(const CallShape& call, std::uint64_t serial, bool by_limits) {
  current_.reset();
  const std::optional<std::size_t> size_class = copy_choice_class(call);
  if (!size_class) return by_limits;  // not learned: the caller should have passed
  const std::atomic_ref<std::uint64_t> word(this->word(call, *size_class));
  const CopyChoice seen = unpack_choice(word.load(std::memory_order_acquire));
  const CopyPath path = seen.valid ? seen.at(serial) : path_of(by_limits);
  bool timed = seen.timing;
  const int decider = rooted(*size_class) ? call.root : 0;
  if (local_rank_ == decider) {
    // The decider's own changes take effect one call after it makes them, so `path` is what
    // it published last (or the limits' path).
    const PlanLearner<CopyPath>& mine = learner(*size_class, path);
    CopyChoice wanted = seen;
    if (!seen.valid) {
      wanted = CopyChoice{{.valid = true, .old_value = path, .new_value = path, .from_serial = 0},
                          /*timing=*/false};
    }
    if (mine.wanted() != path) {
      wanted.old_value = path;
      wanted.new_value = mine.wanted();
      wanted.from_serial = serial + 1;
    }
    wanted.timing = timed = mine.wants_timing();
    // Released by this rank's first sync of the call, which everyone reads before the next.
    if (pack(wanted) != pack(seen)) word.store(pack(wanted), std::memory_order_release);
  }
  current_ = Call{*size_class, decider, path, serial, learned_calls_++ % 2, timed, 0};
  return path == CopyPath::Once;
}

bool CopyChooser::wants_timing() const {
  return current_ && current_->timed;
}

std::optional<std::chrono::nanoseconds> CopyChooser::slowest(const Call& call) const {
  std::chrono::nanoseconds longest{0};
  for (RankRecord& rank : view_.ranks) {
    const auto time = call_time_of(
        std::atomic_ref<std::uint64_t>(rank.call_times[call.slot]).load(std::memory_order_relaxed),
        call.serial);
    if (!time) return std::nullopt;
    longest = std::max(longest, *time);
  }
  return longest;
}

void CopyChooser::finished(std::optional<std::chrono::nanoseconds> took, std::uint64_t bytes) {
  if (!current_) return;
  Call call = *current_;
  current_.reset();
  call.timed = call.timed && took;
  call.bytes = std::max<std::uint64_t>(bytes, 1);
  if (call.timed) {
    std::atomic_ref<std::uint64_t>(
        view_.ranks[static_cast<std::size_t>(local_rank_)].call_times[call.slot])
        .store(pack_call_time(call.serial, *took), std::memory_order_relaxed);
  }
  // The pending call is the one before this in the places' turn, so this call did not
  // overwrite its times. If this is an alltoall or allgather, every rank entered it and so
  // finished the pending call and left its time; after a bcast or scatter a time may be missing.
  if (pending_) {
    const std::optional<std::chrono::nanoseconds> time = slowest(*pending_);
    std::optional<double> per_byte;
    if (time) per_byte = static_cast<double>(time->count()) / static_cast<double>(pending_->bytes);
    learner(pending_->size_class, pending_->path).finished(pending_->path, per_byte);
    pending_.reset();
  }
  if (local_rank_ != call.decider) return;
  if (call.timed) {
    pending_ = call;
  } else {
    learner(call.size_class, call.path).finished(call.path, std::nullopt);
  }
}

int CopyChooser::total(int (PlanLearner<CopyPath>::*count)() const) const {
  int sum = 0;
  for (const auto& learner : learners_) sum += learner ? ((*learner).*count)() : 0;
  return sum;
}

int CopyChooser::rounds() const {
  return total(&PlanLearner<CopyPath>::rounds);
}

int CopyChooser::switches() const {
  return total(&PlanLearner<CopyPath>::switches);
}

}  // namespace multilane::runtime::shm
