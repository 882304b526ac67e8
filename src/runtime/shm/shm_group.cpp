#include "runtime/shm/shm_group.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <functional>

#include "multilane/collective.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "runtime/shm/attach.hpp"
#include "runtime/shm/call_policy.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/topology.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::uint64_t kMinBufferSize = 64;

Geometry geometry_of(const ShmTuning& tuning) {
  return {tuning.buffer_size, static_cast<std::uint32_t>(std::max(tuning.pipeline_buffers, 0))};
}

// The tuning's problem, or an empty string.
std::string tuning_problem(const ShmTuning& tuning, std::uint64_t capacity) {
  if (tuning.buffer_size < kMinBufferSize) {
    return fmt::format("buffer size {} is below the minimum of {} bytes", tuning.buffer_size,
                       kMinBufferSize);
  }
  if (tuning.pipeline_buffers < 1 || tuning.pipeline_buffers > kMaxPipelineBuffers) {
    return fmt::format("{} pipeline buffers is outside 1..{}", tuning.pipeline_buffers,
                       kMaxPipelineBuffers);
  }
  const std::uint64_t needed = data_bytes(geometry_of(tuning));
  if (capacity != 0 && needed > capacity) {
    return fmt::format(
        "{} pipeline buffers of {} need {} bytes but the segment's data area has {} bytes "
        "(ShmOptions::capacity)",
        tuning.pipeline_buffers, format_size(tuning.buffer_size), needed, capacity);
  }
  return {};
}

std::uint64_t capacity_of(const ShmOptions& options) {
  return options.capacity != 0 ? options.capacity : data_bytes(geometry_of(options.tuning));
}

void check_options(int node_id, int local_rank, int local_size, const ShmOptions& options) {
  if (local_size < 1 || local_size > kMaxLocalSize) {
    throw UsageError(
        fmt::format("shm group: local size {} is outside 1..{}", local_size, kMaxLocalSize));
  }
  if (local_rank < 0 || local_rank >= local_size) {
    throw UsageError(
        fmt::format("shm group: local rank {} is outside 0..{}", local_rank, local_size - 1));
  }
  if (node_id < 0) throw UsageError(fmt::format("shm group: node id {} is negative", node_id));
  if (options.timeout.count() <= 0 || options.check_interval.count() <= 0) {
    throw UsageError("shm group: timeout and check interval must be positive");
  }
  if (const auto problem = tuning_problem(options.tuning, capacity_of(options)); !problem.empty()) {
    throw UsageError("shm group: tuning: " + problem);
  }
  const PlanLearning& learning = options.copy_learning;
  if (learning.samples < 1 || learning.first_period < 0 ||
      learning.last_period < learning.first_period || !(learning.margin < 1) ||
      learning.first_rest < 0) {
    throw UsageError(fmt::format(
        "shm group: copy learning: {} samples, rests of {}..{} calls, a margin of {} and {} "
        "calls before the first round are outside samples >= 1, 0 <= first rest <= last rest, "
        "margin < 1, calls before the first round >= 0",
        learning.samples, learning.first_period, learning.last_period, learning.margin,
        learning.first_rest));
  }
}

bool overlap(std::span<const std::byte> a, std::span<std::byte> b) {
  if (a.empty() || b.empty()) return false;
  const std::less<const std::byte*> before;
  return before(a.data(), b.data() + b.size()) && before(b.data(), a.data() + a.size());
}

// The machine's hardware threads (hwloc), not this process's affinity mask: ranks pinned to
// one core each (as mpirun does) see a mask of one core but do not share it.
bool oversubscribed(int local_size) {
  return local_size > machine_topology().hardware_threads;
}

}  // namespace

Polling default_polling(int local_size) {
  return {std::chrono::microseconds(50), oversubscribed(local_size)};
}

namespace {
constexpr std::array<std::string_view, 3> kCopyModeNames = {"auto", "once", "twice"};
}

std::string_view to_string(CopyMode mode) {
  return kCopyModeNames[static_cast<std::size_t>(mode)];
}

std::optional<CopyMode> parse_copy_mode(std::string_view text) {
  for (std::size_t i = 0; i < kCopyModeNames.size(); ++i) {
    if (kCopyModeNames[i] == text) return static_cast<CopyMode>(i);
  }
  return std::nullopt;
}

SingleCopyLimits default_single_copy(int local_size) {
  if (oversubscribed(local_size)) return {64 << 10, 1 << 20, 32 << 10};
  return SingleCopyLimits::from_size(8 << 10);
}

struct ShmGroup::State {
  GroupIdentity identity;
  ShmOptions options;
  ShmSegment segment;
  ShmEndpoint endpoint;
  // What every call touches, together: a call that comes back to a cache that other code has
  // taken in between brings back fewer lines (bench/shm_overhead, two_ranks_one_thread_cold).
  std::uint64_t serial = 0;
  StageClock clock;
  // How each call copies (call_policy.hpp). A call that repeats the last one's arguments (the
  // common case: an application calls the same collective in a loop) skips the checks below
  // and the decisions that depend on the arguments alone, which otherwise cost as much as an
  // 8-byte call's copies.
  CallPolicy policy;

  State(const GroupIdentity& group, const ShmOptions& options_, const WaitPolicy& wait)
      : identity(group),
        options(options_),
        segment(attach_group(group, wait)),
        endpoint(view(), group.local_rank, wait, group_label(group)),
        policy(view(), group.local_rank, group.local_size, options) {}
  // The parts of the mapped segment (segment and identity are initialised first).
  SegmentView view() const {
    return view_segment(segment.data(), identity.local_size, identity.capacity);
  }
  // The shape of a call of this group (a barrier: no collective).
  CallShape shape(std::optional<Collective> collective, int root, std::uint64_t size) const {
    CallShape call;
    call.collective = collective;
    call.root = root;
    call.size = size;
    call.local_size = identity.local_size;
    return call;
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() { endpoint.leave(); }

  [[noreturn]] void usage_error(const std::string& what) {
    endpoint.break_group({ErrorKind::usage, what});
    throw UsageError(endpoint.label() + ": " + what);
  }

  // The block size of the call (collective.hpp), after checking the size of every buffer
  // this rank uses.
  std::uint64_t block_size(const CallArguments& call);
  // Checks a call's arguments (but not where its buffers lie) and has the policy decide what
  // depends on them alone.
  void decide(const CallArguments& call, bool own_tuning);
};

void ShmGroup::State::decide(const CallArguments& arguments, bool own_tuning) {
  const ShmTuning& tuning = arguments.tuning;
  const std::string_view name = to_string(arguments.collective);
  // The group's own tuning was checked when the group was made.
  if (own_tuning) {
    if (const auto problem = tuning_problem(tuning, identity.capacity); !problem.empty()) {
      usage_error(fmt::format("{}: tuning: {}", name, problem));
    }
  }
  if (arguments.collective == Collective::Allgather &&
      tuning.buffer_size < static_cast<std::uint64_t>(identity.local_size)) {
    usage_error(fmt::format("allgather: buffer size {} is below the {} local ranks",
                            tuning.buffer_size, identity.local_size));
  }
  policy.decide(arguments, shape(arguments.collective, arguments.root, block_size(arguments)),
                geometry_of(tuning));
}

std::uint64_t ShmGroup::State::block_size(const CallArguments& call) {
  const int p = identity.local_size;
  const int me = identity.local_rank;
  const Collective collective = call.collective;
  const int root = call.root;
  const std::string_view name = to_string(collective);
  if (root < 0 || root >= p) {
    usage_error(fmt::format("{}: root {} is outside 0..{}", name, root, p - 1));
  }
  std::uint64_t size = 0;
  switch (collective) {
    case Collective::Bcast:
      return call.recv_size;
    case Collective::Scatter:
      size = call.recv_size;
      break;
    case Collective::Gather:
    case Collective::Allgather:
      size = call.send_size;
      break;
    case Collective::Alltoall:
      if (call.send_size % static_cast<std::size_t>(p) != 0) {
        usage_error(
            fmt::format("alltoall: the send buffer has {} bytes, not a multiple of the {} "
                        "local ranks",
                        call.send_size, p));
      }
      size = call.send_size / static_cast<std::size_t>(p);
      break;
    case Collective::Reduce:
    case Collective::Allreduce:
    case Collective::ReduceScatter:
    case Collective::Scan:
    case Collective::Exscan:
    case Collective::Gatherv:
    case Collective::Scatterv:
    case Collective::Allgatherv:
    case Collective::Alltoallv:
    case Collective::ReduceScatterv:
      usage_error(fmt::format("{} has no shared-memory group call", name));
  }
  const auto check = [&](Buffer buffer, std::size_t actual) {
    const std::uint64_t expected = multilane::buffer_size(collective, buffer, me, p, root, size);
    if (actual != expected) {
      usage_error(
          fmt::format("{}: the {} buffer has {} bytes but must have {} ({} local ranks, "
                      "{} bytes per block)",
                      name, to_string(buffer), actual, expected, p, size));
    }
  };
  // Buffers a rank does not use (scatter's send and gather's receive buffer off the root) are
  // ignored, as in MPI.
  if (collective != Collective::Scatter || me == root) check(Buffer::Send, call.send_size);
  if (collective != Collective::Gather || me == root) check(Buffer::Recv, call.recv_size);
  return size;
}

ShmGroup::ShmGroup(std::uint64_t job_id, int node_id, int local_rank, int local_size,
                   const ShmOptions& options) {
  check_options(node_id, local_rank, local_size, options);
  GroupIdentity group;
  group.job_id = job_id;
  group.node_id = static_cast<std::uint32_t>(node_id);
  group.instance = options.instance;
  group.local_rank = local_rank;
  group.local_size = local_size;
  group.capacity = capacity_of(options);
  WaitPolicy policy;
  const Polling polling = default_polling(local_size);
  policy.spin = options.spin.value_or(polling.spin);
  policy.yield_while_polling = options.yield_while_polling.value_or(polling.yield);
  policy.timeout = options.timeout;
  policy.check_interval = options.check_interval;
  state_ = std::make_unique<State>(group, options, policy);
}

ShmGroup::ShmGroup(ShmGroup&&) noexcept = default;
ShmGroup& ShmGroup::operator=(ShmGroup&&) noexcept = default;
ShmGroup::~ShmGroup() = default;

int ShmGroup::local_rank() const {
  return state_->identity.local_rank;
}
int ShmGroup::local_size() const {
  return state_->identity.local_size;
}
std::uint64_t ShmGroup::capacity() const {
  return state_->identity.capacity;
}
bool ShmGroup::single_copy_allowed() const {
  return state_->policy.single_copy_allowed();
}

const SingleCopyLimits& ShmGroup::single_copy_limits() const {
  return state_->policy.limits();
}

bool ShmGroup::copies_once(Collective collective, std::uint64_t block_size,
                           const ShmTuning& tuning) const {
  return state_->policy.copies_once_by_limits(state_->shape(collective, 0, block_size),
                                              geometry_of(tuning), tuning.copies);
}

std::uint64_t ShmGroup::calls_copied_once() const {
  return state_->policy.calls_copied_once();
}

int ShmGroup::root_share_changes() const {
  return state_->policy.root_share_changes();
}

std::optional<double> ShmGroup::root_share(Collective collective, std::uint64_t block_size,
                                           int root) const {
  CallShape call = state_->shape(collective, root, block_size);
  call.single_copy = true;
  if (!has_root_share(call)) return std::nullopt;
  return static_cast<double>(state_->policy.root_share_of(call, state_->serial + 1)) / kShareUnits;
}

std::uint64_t ShmGroup::geometry_epochs() const {
  return state_->clock.epochs;
}

const SegmentName& ShmGroup::segment_name() const {
  return state_->segment.name();
}
ShmEndpoint& ShmGroup::endpoint() {
  return state_->endpoint;
}

void ShmGroup::interrupt(const Failure& reason) {
  state_->endpoint.interrupt(reason);
}

const DirectCopies& ShmGroup::direct_copies() const {
  return state_->endpoint.direct_copies();
}

const ShmPlan& ShmGroup::prepare(Collective collective, std::span<const std::byte> send,
                                 std::span<std::byte> recv, int root,
                                 std::optional<ShmTuning> tuning) {
  State& s = *state_;
  s.endpoint.check_not_broken();
  const CallArguments arguments{collective, root, send.size(), recv.size(),
                                tuning.value_or(s.options.tuning)};
  if (!s.policy.repeats(arguments)) s.decide(arguments, tuning.has_value());
  // Bcast works in place (`send` is ignored).
  if (collective != Collective::Bcast && overlap(send, recv)) {
    s.usage_error(fmt::format("{}: the send and receive buffers overlap", to_string(collective)));
  }
  CallInfo call;
  call.serial = ++s.serial;
  const CallDecision decision = s.policy.next(call.serial);
  call.collective = collective;
  call.root = root;
  call.size = decision.shape.size;
  call.geometry = decision.geometry;
  call.single_copy = decision.shape.single_copy;
  call.root_share = decision.shape.root_share.value_or(0);
  s.endpoint.enter_call(call);
  return s.policy.plan_for(decision.shape, s.identity.local_rank, call.geometry, s.clock);
}

void ShmGroup::run(Collective collective, std::span<const std::byte> send,
                   std::span<std::byte> recv, int root, std::optional<ShmTuning> tuning) {
  const ShmPlan& plan = prepare(collective, send, recv, root, tuning);
  const ShmBuffers buffers = step_buffers(collective, send, recv);
  // Only calls that one of the learners times read the clock (copy_chooser.hpp, root_share.hpp).
  CallPolicy& policy = state_->policy;
  const bool timed = policy.timed();
  const bool times_copies = policy.times_copies();
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  ShmEndpoint& endpoint = state_->endpoint;
  endpoint.time_copies(times_copies);
  for (const Step& step : plan.steps) {
    // The root's copying ends where it starts waiting for the others: at its last step.
    if (times_copies && root == local_rank() && &step == &plan.steps.back()) {
      endpoint.stamp_copy_time();
    }
    endpoint.run(step, buffers);
  }
  endpoint.time_copies(false);
  std::optional<std::chrono::nanoseconds> took;
  if (timed) took = std::chrono::steady_clock::now() - start;
  policy.finished(took, std::max(send.size(), recv.size()));
}

ShmStepwiseCall ShmGroup::begin(Collective collective, std::span<const std::byte> send,
                                std::span<std::byte> recv, int root,
                                std::optional<ShmTuning> tuning) {
  const ShmPlan& plan = prepare(collective, send, recv, root, tuning);
  return ShmStepwiseCall(*this, plan, step_buffers(collective, send, recv),
                         std::max(send.size(), recv.size()));
}

ShmStepwiseCall::ShmStepwiseCall(ShmGroup& group, const ShmPlan& plan, ShmBuffers buffers,
                                 std::uint64_t bytes)
    : group_(&group),
      plan_(&plan),
      buffers_(buffers),
      bytes_(bytes),
      started_(std::chrono::steady_clock::now()) {}

bool ShmStepwiseCall::startable(std::size_t i) const {
  return group_->endpoint().startable(plan_->steps.at(i));
}

void ShmStepwiseCall::perform(std::size_t i) {
  group_->endpoint().perform(plan_->steps.at(i), buffers_);
}

void ShmStepwiseCall::run(std::size_t i) {
  group_->endpoint().run(plan_->steps.at(i), buffers_);
}

void ShmStepwiseCall::finish() {
  CallPolicy& policy = group_->state_->policy;
  std::optional<std::chrono::nanoseconds> took;
  if (policy.timed()) took = std::chrono::steady_clock::now() - started_;
  policy.finished(took, bytes_);
}

ShmBuffers step_buffers(Collective collective, std::span<const std::byte> send,
                        std::span<std::byte> recv) {
  return {collective == Collective::Bcast ? recv.data() : send.data(), recv.data()};
}

void ShmGroup::barrier() {
  State& s = *state_;
  s.endpoint.check_not_broken();
  const CallShape shape = s.shape(std::nullopt, 0, 0);
  CallInfo call;
  call.serial = ++s.serial;
  call.geometry = s.clock.geometry.buffers != 0 ? s.clock.geometry : geometry_of(s.options.tuning);
  s.endpoint.enter_call(call);
  const ShmPlan& plan = s.policy.plan_for(shape, s.identity.local_rank, call.geometry, s.clock);
  for (const Step& step : plan.steps) s.endpoint.run(step, {});
}

void ShmGroup::bcast(std::span<std::byte> buffer, int root, std::optional<ShmTuning> tuning) {
  run(Collective::Bcast, {}, buffer, root, tuning);
}

void ShmGroup::scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                       std::optional<ShmTuning> tuning) {
  run(Collective::Scatter, send, recv, root, tuning);
}

void ShmGroup::gather(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                      std::optional<ShmTuning> tuning) {
  run(Collective::Gather, send, recv, root, tuning);
}

void ShmGroup::allgather(std::span<const std::byte> send, std::span<std::byte> recv,
                         std::optional<ShmTuning> tuning) {
  run(Collective::Allgather, send, recv, 0, tuning);
}

void ShmGroup::alltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                        std::optional<ShmTuning> tuning) {
  run(Collective::Alltoall, send, recv, 0, tuning);
}

}  // namespace multilane::runtime::shm
