#include "runtime/shm/root_share.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

#include "runtime/shm/call_record.hpp"
#include "runtime/shm/upper_median.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::uint64_t kLine = 64;
constexpr std::uint64_t kValid = 1;
constexpr int kOldShift = 1;
constexpr int kNewShift = 12;
constexpr int kSerialShift = 23;
constexpr std::uint64_t kShareMask = 0x7ff;

// Blocks of 4 KiB (2^12) and less in the first class, of 128 MiB and more in the last.
constexpr int kSmallestClass = 12;

// A change smaller than this is noise (0.2% of a block).
constexpr int kSmallestChange = 2;

std::size_t collective_index(Collective collective) {
  switch (collective) {
    case Collective::Bcast:
      return 0;
    case Collective::Scatter:
      return 1;
    default:
      return 2;
  }
}

}  // namespace

bool has_root_share(const CallShape& call) {
  const bool rooted = call.collective == Collective::Bcast ||
                      call.collective == Collective::Scatter ||
                      call.collective == Collective::Gather;
  return rooted && call.single_copy && call.local_size > 1 && call.size > 0;
}

std::uint16_t default_root_share(Collective collective, int local_size) {
  const std::uint32_t quarters = collective == Collective::Bcast ? 4 : 3;
  const auto p = static_cast<std::uint32_t>(std::max(local_size, 1));
  return static_cast<std::uint16_t>(std::min(quarters * kShareUnits / 4 / p, kMaxShare));
}

std::uint64_t share_bytes(std::uint64_t size, std::uint16_t share) {
  return size * std::min<std::uint32_t>(share, kMaxShare) / kShareUnits / kLine * kLine;
}

std::uint64_t root_share_bytes(const CallShape& call) {
  if (!call.collective) return 0;
  return share_bytes(
      call.size, call.root_share.value_or(default_root_share(*call.collective, call.local_size)));
}

std::uint16_t propose_root_share(std::uint16_t share, std::uint64_t size, int local_size,
                                 double root_seconds, double others_seconds) {
  const double s = static_cast<double>(size);
  const double shared = s * share / kShareUnits;
  const double rest = s - shared;
  if (s <= 0 || local_size < 2) return share;
  // Moving d bytes to the root adds (p - 1) d to its copies and takes d from each other rank's,
  // at about the others' time per byte on both sides.
  const double per_byte =
      rest >= s / 64 ? others_seconds / rest : root_seconds / ((local_size - 1) * shared);
  if (!(per_byte > 0)) return share;
  const double balance = (others_seconds - root_seconds) / (local_size * per_byte);
  const double step = std::clamp(balance / 2, -s / 16, s / 16);
  const double units = std::clamp((shared + step) / s * kShareUnits, 0.0, double{kMaxShare});
  const auto proposed = static_cast<std::uint16_t>(std::lround(units));
  return std::abs(proposed - share) < kSmallestChange ? share : proposed;
}

std::uint64_t pack(const ShareChoice& choice) {
  if (!choice.valid) return 0;
  return kValid | (choice.old_value & kShareMask) << kOldShift |
         (choice.new_value & kShareMask) << kNewShift | choice.from_serial << kSerialShift;
}

ShareChoice unpack_share(std::uint64_t word) {
  ShareChoice choice;
  choice.valid = (word & kValid) != 0;
  choice.old_value = static_cast<std::uint16_t>(word >> kOldShift & kShareMask);
  choice.new_value = static_cast<std::uint16_t>(word >> kNewShift & kShareMask);
  choice.from_serial = word >> kSerialShift;
  return choice;
}

std::optional<std::size_t> root_share_class(const CallShape& call) {
  if (!has_root_share(call)) return std::nullopt;
  const int size_class =
      std::clamp(static_cast<int>(std::bit_width(call.size)) - 1 - kSmallestClass, 0,
                 static_cast<int>(kRootShareClasses) - 1);
  return collective_index(*call.collective) * kRootShareClasses +
         static_cast<std::size_t>(size_class);
}

RootShareBalancer::RootShareBalancer(const SegmentView& view, int local_rank, bool learns)
    : view_(view), local_rank_(local_rank), learns_(learns) {}

std::uint64_t& RootShareBalancer::word(int root, std::size_t share_class) const {
  return view_.roots[static_cast<std::size_t>(root)].shares[share_class];
}

std::uint16_t RootShareBalancer::share_in(std::size_t share_class, const CallShape& call,
                                          std::uint64_t serial) const {
  const ShareChoice seen = unpack_share(
      std::atomic_ref<std::uint64_t>(word(call.root, share_class)).load(std::memory_order_acquire));
  return seen.valid ? seen.at(serial) : default_root_share(*call.collective, call.local_size);
}

std::uint16_t RootShareBalancer::share_of(const CallShape& call, std::uint64_t serial) const {
  const std::optional<std::size_t> share_class = root_share_class(call);
  return share_class ? share_in(*share_class, call, serial) : 0;
}

std::uint16_t RootShareBalancer::choose(const CallShape& call, std::uint64_t serial) {
  current_.reset();
  const std::optional<std::size_t> share_class = root_share_class(call);
  if (!share_class) return 0;  // the caller should have passed
  const std::uint16_t share = share_in(*share_class, call, serial);
  const bool root = call.root == local_rank_;
  Learning& learning = learning_[*share_class];
  if (root && learning.proposal) {
    if (*learning.proposal != share) {
      // Released by this rank's first sync of the call, which every rank waits for.
      std::atomic_ref<std::uint64_t>(word(call.root, *share_class))
          .store(pack(ShareChoice{.valid = true,
                                  .old_value = share,
                                  .new_value = *learning.proposal,
                                  .from_serial = serial + 1}),
                 std::memory_order_release);
      ++changes_;
    }
    learning.proposal.reset();
  }
  current_ = Call{*share_class, serial, share, call.size, call.local_size, root};
  return share;
}

std::optional<std::pair<double, double>> RootShareBalancer::times(const Call& call) const {
  double root = 0;
  double others = 0;
  for (std::size_t r = 0; r < view_.ranks.size(); ++r) {
    const auto time = call_time_of(
        std::atomic_ref<std::uint64_t>(view_.ranks[r].copy_time).load(std::memory_order_relaxed),
        call.serial);
    if (!time) return std::nullopt;
    const double seconds = std::chrono::duration<double>(*time).count();
    if (static_cast<int>(r) == local_rank_) {
      root = seconds;
    } else {
      others = std::max(others, seconds);
    }
  }
  return std::pair{root, others};
}

void RootShareBalancer::finished(std::chrono::nanoseconds call_time) {
  if (!current_) return;
  const Call call = *current_;
  current_.reset();
  if (!call.root || !learns_) return;
  Learning& learning = learning_[call.share_class];
  const SharePlan with_share = call.share != 0 ? SharePlan::With : SharePlan::Without;
  // The first call of the class runs at the default share.
  if (!learning.balanced) learning.balanced = call.share;
  if (!learning.share_pays) learning.share_pays.emplace(with_share, kSharePays);
  PlanLearner<SharePlan>& share_pays = *learning.share_pays;
  // Every rank released the call's stage, after storing its time.
  const auto measured = times(call);
  const double seconds = std::chrono::duration<double>(call_time).count();
  const bool counts = measured && (seconds < kProbeBelow || share_pays.probing());
  // Once the balance reached 0 the two plans are one: the call counts for either.
  const SharePlan plan = *learning.balanced == 0 ? share_pays.wanted() : with_share;
  share_pays.finished(plan, counts ? std::optional(seconds) : std::nullopt);
  // At share 0 the balance would always ask for one (the root copies nothing): it stays.
  if (with_share == SharePlan::With && measured) {
    balance(learning, call, measured->first, measured->second);
  }
  const std::uint16_t wanted = share_pays.wanted() == SharePlan::With ? *learning.balanced : 0;
  learning.proposal = wanted != call.share ? std::optional(wanted) : std::nullopt;
}

void RootShareBalancer::balance(Learning& learning, const Call& call, double root_seconds,
                                double others_seconds) {
  if (learning.share != call.share) {
    learning.root_seconds.clear();
    learning.others_seconds.clear();
    learning.share = call.share;
  }
  learning.root_seconds.push_back(root_seconds);
  learning.others_seconds.push_back(others_seconds);
  if (static_cast<int>(learning.root_seconds.size()) < kSamples) return;
  learning.balanced = propose_root_share(call.share, call.size, call.local_size,
                                         upper_median(learning.root_seconds),
                                         upper_median(learning.others_seconds));
  learning.root_seconds.clear();
  learning.others_seconds.clear();
}

}  // namespace multilane::runtime::shm
