// runtime/shm/call_policy.cpp — see call_policy.hpp.
#include "runtime/shm/call_policy.hpp"

#include <atomic>

namespace multilane::runtime::shm {

CallPolicy::CallPolicy(const SegmentView& view, int local_rank, int local_size,
                       const ShmOptions& options)
    : single_copy_allowed_(
          std::atomic_ref<std::uint32_t>(view.header->single_copy_refusals).load() == 0),
      limits_(options.single_copy.value_or(default_single_copy(local_size))),
      chooser_(view, local_rank, options.learn_copy_path && !options.single_copy,
               options.copy_learning),
      shares_(view, local_rank, options.learn_root_share) {}

bool CallPolicy::can_copy_once(const CallShape& call, const Geometry& geometry) const {
  return single_copy_allowed_ && call.size > 0 && call.local_size > 1 &&
         static_cast<std::uint64_t>(call.local_size) * kExposedBytes <= geometry.buffer_size;
}

bool CallPolicy::copies_once_by_limits(const CallShape& call, const Geometry& geometry,
                                       CopyMode mode) const {
  const std::uint64_t from = call.collective == Collective::Bcast    ? limits_.bcast_from
                             : call.collective == Collective::Gather ? limits_.gather_from
                                                                     : limits_.from;
  const bool wanted =
      mode == CopyMode::Once || (mode == CopyMode::Auto && from > 0 && call.size >= from);
  return wanted && can_copy_once(call, geometry);
}

void CallPolicy::decide(const CallArguments& arguments, const CallShape& shape,
                        const Geometry& geometry) {
  const CopyMode mode = arguments.tuning.copies;
  shape_ = shape;
  geometry_ = geometry;
  learns_ = mode == CopyMode::Auto && chooser_.learns(shape_, can_copy_once(shape_, geometry_));
  shape_.single_copy = copies_once_by_limits(shape_, geometry_, mode);
  last_arguments_ = arguments;
}

CallDecision CallPolicy::next(std::uint64_t serial) {
  CallDecision decision{.shape = shape_, .geometry = geometry_};
  CallShape& shape = decision.shape;
  if (learns_) {
    shape.single_copy = chooser_.choose(shape, serial, shape_.single_copy);
  } else {
    chooser_.pass();
  }
  if (has_root_share(shape)) {
    shape.root_share = shares_.choose(shape, serial);
  } else {
    shares_.pass();
  }
  calls_copied_once_ += shape.single_copy ? 1 : 0;
  return decision;
}

void CallPolicy::finished(std::optional<std::chrono::nanoseconds> took, std::uint64_t bytes) {
  const bool chooser_times = chooser_.wants_timing();
  shares_.finished(took.value_or(std::chrono::nanoseconds{0}));
  chooser_.finished(chooser_times ? took : std::nullopt, bytes);
}

}  // namespace multilane::runtime::shm
