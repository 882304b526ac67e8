// runtime/api/communicator.cpp — the Communicator (see multilane/communicator.hpp).
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "multilane/collective.hpp"
#include "runtime/api/communicator_impl.hpp"
#include "runtime/api/local_call.hpp"
#include "runtime/exec/schedule_run.hpp"
#include "runtime/launch/launch_platform.hpp"
#include "runtime/tcp/tcp_connect.hpp"

namespace multilane {

using runtime::Engine;
using runtime::EngineConfig;

Platform job_platform(const std::string& platform_file, int size) {
  if (platform_file.empty()) {
    // One site of single-lane nodes on 10 Gbit/s with 20 us latency: a LAN-class guess that
    // only serves to rank the algorithms when no platform is described.
    Platform platform = make_uniform_platform(1, size, 1, 1, 1.25e9, 20e-6, 0, 0, 0);
    platform.name = "default";
    return platform;
  }
  return runtime::platform_for_job(platform_file, size);
}

namespace {

// On loopback a fixed 1 MiB window moves a 1 MiB message in about half the time the system's
// autotuning takes (docs/performance.md).
int lan_socket_buffer(int requested) {
  if (requested != kAutomaticSocketBuffer) return requested;
  return runtime::buffer_within_limit(1 << 20, runtime::largest_socket_buffer());
}

EngineConfig engine_config(const CommunicatorSetup& setup) {
  const CommunicatorOptions& o = setup.options;
  EngineConfig config;
  config.rank = setup.rank;
  config.size = setup.size;
  config.job_id = setup.job_id;
  config.secret = setup.secret;
  config.lane_addresses.clear();
  for (const Lane& lane : setup.platform.nodes.at(setup.platform.node_of(setup.rank)).lanes) {
    config.lane_addresses.push_back(lane.address.empty() ? setup.host : lane.address);
  }
  const int lan_buffer = lan_socket_buffer(o.lan_socket_buffer);
  config.lan = {o.lan_streams, {lan_buffer, lan_buffer, 0}};
  config.wan = {o.wan_streams, {o.wan_socket_buffer, o.wan_socket_buffer, o.wan_pacing_bps}};
  config.stripe = {o.stripe_threshold, o.max_chunk};
  config.timeout = o.timeout;
  config.unexpected_budget = o.unexpected_budget;
  config.resend_stalled = o.resend_stalled;
  config.while_waiting = o.while_waiting;
  config.listen_port_low = o.listen_port_low;
  config.listen_port_high = o.listen_port_high;
  return config;
}

void check_options(const CommunicatorOptions& o) {
  auto range = [](const char* name, long long value, long long low, long long high) {
    if (value < low || value > high) {
      throw UsageError(
          fmt::format("{} {} is out of range: must be {}..{}", name, value, low, high));
    }
  };
  range("lan_streams", o.lan_streams, 1, 256);
  range("wan_streams", o.wan_streams, 1, 256);
  range("lan_socket_buffer", o.lan_socket_buffer, kAutomaticSocketBuffer, 1 << 30);
  range("wan_socket_buffer", o.wan_socket_buffer, 0, 1 << 30);
  range("timeout (ms)", o.timeout.count(), 1, 86'400'000);
  if (o.max_chunk == 0) throw UsageError("max_chunk must be at least 1 byte");
  const bool any_port = o.listen_port_low == 0 && o.listen_port_high == 0;
  if (!any_port && (o.listen_port_low == 0 || o.listen_port_low > o.listen_port_high)) {
    throw UsageError(fmt::format("listen ports {}-{}: must be LOW-HIGH with 1 <= LOW <= HIGH",
                                 o.listen_port_low, o.listen_port_high));
  }
}

}  // namespace

CommunicatorImpl::CommunicatorImpl(CommunicatorSetup setup, runtime::AddressBook& book)
    : setup_(std::move(setup)), job_(std::make_shared<SharedJob>()) {
  try {
    check_options(setup_.options);
    if (setup_.platform.num_ranks() != setup_.size) {
      throw UsageError(fmt::format("the platform places {} ranks, the job has {}",
                                   setup_.platform.num_ranks(), setup_.size));
    }
    job_->engine = std::make_unique<Engine>(engine_config(setup_));
    job_->ranks = setup_.size;
    job_rank_ = setup_.rank;
  } catch (const std::exception& e) {
    // The others are about to wait for this rank's addresses: tell them why there are none.
    book.publish_failure(setup_.rank, runtime::Failure::of(e));
    throw;
  }
  take_space(0);
  book.publish(setup_.rank, engine().listening_addresses());
  for (int peer = 0; peer < setup_.size; ++peer) {
    engine().set_peer_addresses(
        peer, peer == setup_.rank ? engine().listening_addresses() : book.lookup(peer));
  }
}

CommunicatorImpl::CommunicatorImpl(const CommunicatorImpl& member, std::uint32_t space,
                                   bool concurrent_calls, const runtime::JobMembership* membership)
    : setup_(member.setup_),
      job_(member.job_),
      job_ranks_(member.job_ranks_),
      job_rank_(member.job_rank_),
      group_key_(member.group_key_) {
  if (membership) {  // checked by JobSharing::share()
    setup_.rank = membership->rank;
    setup_.size = membership->platform.num_ranks();
    setup_.platform = membership->platform;
    job_ranks_ = membership->job_ranks;
    group_key_ = XXH3_64bits(job_ranks_.data(), job_ranks_.size() * sizeof(int)) | 1;
  }
  if (concurrent_calls) {
    std::lock_guard lock(job_->mutex);
    job_->concurrent_calls = true;
  }
  take_space(space);
}

CommunicatorImpl::~CommunicatorImpl() {
  groups_.reset();  // its segments are gone before another communicator takes the space
  give_space_back();
}

void CommunicatorImpl::check_membership(const CommunicatorImpl& member,
                                        const runtime::JobMembership& membership) {
  const std::vector<int>& ranks = membership.job_ranks;
  const int job_size = member.job_->ranks;
  if (ranks.empty() || membership.platform.num_ranks() != static_cast<int>(ranks.size())) {
    throw UsageError(fmt::format("a communicator of {} ranks in a job has a platform of {} ranks",
                                 ranks.size(), membership.platform.num_ranks()));
  }
  std::vector<bool> seen(static_cast<std::size_t>(job_size), false);
  for (int rank : ranks) {
    if (rank < 0 || rank >= job_size || seen[static_cast<std::size_t>(rank)]) {
      throw UsageError(
          fmt::format("job rank {} is out of range or given twice: must be 0..{}, "
                      "once each",
                      rank, job_size - 1));
    }
    seen[static_cast<std::size_t>(rank)] = true;
  }
  if (membership.rank < 0 || membership.rank >= static_cast<int>(ranks.size()) ||
      ranks[static_cast<std::size_t>(membership.rank)] != member.job_rank_) {
    throw UsageError(fmt::format("rank {} of the communicator is not job rank {}, this one",
                                 membership.rank, member.job_rank_));
  }
}

void CommunicatorImpl::continue_numbering(runtime::CallNumbering agreed) {
  sequence_ = std::max(sequence_, agreed.sequence);
  generation_ = std::max(generation_, agreed.generation);
}

void CommunicatorImpl::take_space(std::uint32_t space) {
  if (space >= runtime::kCallSpaces) {
    throw UsageError(fmt::format("call space {} is out of range: must be 0..{}", space,
                                 runtime::kCallSpaces - 1));
  }
  std::lock_guard lock(job_->mutex);
  SharedJob::Space& taken = job_->spaces[space];
  if (taken.in_use) {
    throw UsageError(fmt::format("call space {} of job {:016x} is taken", space, setup_.job_id));
  }
  taken.in_use = true;
  space_ = space;
  generation_ = taken.generation;
  sequence_ = std::max(taken.sequence, runtime::first_sequence(space));
  sent_ = taken.sent;
  received_ = taken.received;
  // Counted per job rank: the space's next communicator may hold other ranks.
  sent_.resize(static_cast<std::size_t>(job_->ranks), 0);
  received_.resize(static_cast<std::size_t>(job_->ranks), 0);
  ++job_->communicators;
  engine().set_shared(job_->engine_shared());
}

void CommunicatorImpl::give_space_back() {
  std::lock_guard lock(job_->mutex);
  SharedJob::Space& space = job_->spaces[space_];
  // A communicator that made no call made no shared-memory group either (on any rank, since
  // calls are collective): the next one may use its instance number.
  const bool called = sequence_ != std::max(space.sequence, runtime::first_sequence(space_));
  space = {.in_use = false,
           .sequence = sequence_,
           .sent = std::move(sent_),
           .received = std::move(received_),
           .generation = generation_ + (called ? 1 : 0)};
  --job_->communicators;
  engine().set_shared(job_->engine_shared());
}

void CommunicatorImpl::check_usable() const {
  if (!broken_flag_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(broken_mutex_);
  if (broken_) {
    throw CommunicationError(broken_->kind,
                             "this communicator is unusable after an earlier "
                             "failure: " +
                                 broken_->text);
  }
}

void CommunicatorImpl::mark_broken(const runtime::Failure& failure) {
  std::lock_guard lock(broken_mutex_);
  if (!broken_) broken_ = failure;
  broken_flag_.store(true, std::memory_order_release);
}

void CommunicatorImpl::fail(const runtime::Failure& failure) {
  mark_broken(failure);
  failure.raise();
}

// Completes `state`; a failure breaks the communicator whether or not anybody waits for it.
runtime::Completion CommunicatorImpl::completion(std::shared_ptr<RequestState> state) {
  return [this, state = std::move(state)](const runtime::Outcome& outcome) {
    if (outcome) mark_broken(*outcome);
    state->complete(outcome);
  };
}

void CommunicatorImpl::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= setup_.size) {
    throw UsageError(
        fmt::format("{} {} is out of range: must be 0..{}", what, peer, setup_.size - 1));
  }
}

void CommunicatorImpl::wait(RequestState& state) {
  // A failure has broken the communicator already, as it completed (completion()).
  if (const runtime::Outcome outcome = state.wait()) outcome->raise();
}

namespace {

runtime::LaneRange common_lanes(const Platform& platform, int a, int b) {
  return {.first = 0, .count = std::min(platform.lanes_of(a), platform.lanes_of(b))};
}

}  // namespace

runtime::SendRequest CommunicatorImpl::send_request(std::span<const std::byte> data, int peer) {
  check_usable();
  check_peer(peer, "destination rank");
  const auto& p = setup_.platform;
  const int to = job_rank_of(peer);
  return {
      .peer = to,
      .lanes = common_lanes(p, setup_.rank, peer),
      .link = p.site_of(setup_.rank) == p.site_of(peer) ? runtime::LinkClass::Lan
                                                        : runtime::LinkClass::Wan,
      .key = {runtime::first_sequence(space_), sent_[static_cast<std::size_t>(to)]++},
      .signature = 0,
      .bytes = data,
  };
}

runtime::RecvRequest CommunicatorImpl::recv_request(std::span<std::byte> data, int peer) {
  check_usable();
  check_peer(peer, "source rank");
  const int from = job_rank_of(peer);
  return {.peer = from,
          .key = {runtime::first_sequence(space_), received_[static_cast<std::size_t>(from)]++},
          .signature = 0,
          .bytes = data,
          .landed = {}};
}

std::shared_ptr<RequestState> CommunicatorImpl::start_in_background(runtime::Operation operation) {
  auto state = std::make_shared<RequestState>();
  handed_off_.fetch_add(1, std::memory_order_relaxed);
  engine().start_background(std::move(operation), completion(state));
  return state;
}

template <typename Start>
void CommunicatorImpl::run_blocking(Start&& start) {
  if (runtime::Outcome outcome; engine().run_blocking(start, outcome)) {
    if (outcome) fail(*outcome);
    return;
  }
  wait(*start_in_background(runtime::Operation(std::forward<Start>(start))));
}

namespace {

// The engine operations of a point-to-point message.
auto sending(runtime::Engine& engine, runtime::SendRequest request) {
  return [&engine, request = std::move(request)](runtime::Completion done) {
    engine.send(request, std::move(done));
  };
}

auto receiving(runtime::Engine& engine, runtime::RecvRequest request) {
  return [&engine, request = std::move(request)](runtime::Completion done) {
    engine.recv(request, std::move(done));
  };
}

}  // namespace

std::shared_ptr<RequestState> CommunicatorImpl::start_send(std::span<const std::byte> data,
                                                           int peer) {
  return start_in_background(sending(engine(), send_request(data, peer)));
}

std::shared_ptr<RequestState> CommunicatorImpl::start_recv(std::span<std::byte> data, int peer) {
  return start_in_background(receiving(engine(), recv_request(data, peer)));
}

void CommunicatorImpl::send(std::span<const std::byte> data, int peer) {
  run_blocking(sending(engine(), send_request(data, peer)));
}

void CommunicatorImpl::recv(std::span<std::byte> data, int peer) {
  run_blocking(receiving(engine(), recv_request(data, peer)));
}

runtime::AlgorithmChoice CommunicatorImpl::choose(Collective collective, std::uint64_t size,
                                                  int root, const CollectiveOptions& options,
                                                  std::uint32_t element_size,
                                                  std::span<const std::uint64_t> counts) const {
  const BuildParams params{.root = root,
                           .size = size,
                           .segment = options.segment,
                           .wan_pairs = options.wan_pairs,
                           .element_size = element_size,
                           .counts = std::vector(counts.begin(), counts.end())};
  const ChoiceKey key{collective, size, root, options.segment, options.wan_pairs, element_size};
  std::unique_lock lock(choices_mutex_);
  if (counts.empty()) {
    if (auto it = choices_.find(key); it != choices_.end()) return it->second;
  }
  runtime::AlgorithmChoice choice = runtime::choose_algorithm(setup_.platform, collective, params);
  if (setup_.options.explain && setup_.rank == 0) {
    fmt::print(stderr, "multilane explain: {}\n",
               runtime::explain_choice(choice, collective, params, setup_.size));
  }
  if (counts.empty()) choices_.emplace(key, choice);
  return choice;
}

const CommunicatorImpl::CachedSchedule& CommunicatorImpl::schedule_for(Collective collective,
                                                                       std::string_view algorithm,
                                                                       const BuildParams& params) {
  const ScheduleKey key{collective,     std::string(algorithm), params.root,         params.size,
                        params.segment, params.wan_pairs,       params.element_size, params.counts};
  CachedSchedule& slot = schedules_[key];
  if (slot.schedule) return slot;
  slot = make_schedule(collective, algorithm, params);
  if (!params.counts.empty()) {
    uneven_schedules_.push_back(key);
    if (uneven_schedules_.size() > kUnevenSchedules) {
      forget_schedule(uneven_schedules_.front());
      uneven_schedules_.pop_front();
    }
  }
  return slot;
}

void CommunicatorImpl::forget_schedule(const ScheduleKey& key) {
  const auto found = schedules_.find(key);
  std::erase_if(recent_calls_,
                [&](const RecentCall& recent) { return recent.resolved.cached == &found->second; });
  next_recent_ = 0;
  schedules_.erase(found);
}

CommunicatorImpl::CachedSchedule CommunicatorImpl::make_schedule(Collective collective,
                                                                 std::string_view algorithm,
                                                                 const BuildParams& params) const {
  CachedSchedule made;
  made.schedule = std::make_shared<const Schedule>(
      build_schedule(setup_.platform, collective, algorithm, params));
  made.plan = runtime::plan_rank(*made.schedule, setup_.platform, setup_.rank, job_ranks_);
  made.signature = runtime::call_signature(*made.schedule, params, {});
  return made;
}

namespace {

void check_buffer(Collective collective, Buffer buffer, std::size_t given, int rank, int ranks,
                  int root, std::uint64_t size, std::span<const std::uint64_t> counts) {
  const std::uint64_t needed = buffer_size(collective, buffer, rank, ranks, root, size, counts);
  if (given >= needed) return;
  const std::string per_rank =
      is_uneven(collective) ? "the counts' blocks" : fmt::format("{} bytes per rank", size);
  throw UsageError(
      fmt::format("{}: the {} buffer of rank {} has {} bytes, but this call needs {} "
                  "({}, {} ranks)",
                  to_string(collective), buffer == Buffer::Send ? "send" : "receive", rank, given,
                  needed, per_rank, ranks));
}

}  // namespace

CommunicatorImpl::PreparedCall CommunicatorImpl::prepare(
    Collective collective, std::span<const std::byte> send, std::span<std::byte> recv, int root,
    std::uint64_t size, const CollectiveOptions& options, const Reduction& reduction,
    std::span<const std::uint64_t> counts) {
  check_usable();
  check_peer(root, "root");
  if (const auto error = counts_error(collective, setup_.size, counts)) throw UsageError(*error);
  std::uint32_t element = 1;
  if (is_reduction(collective)) {
    if (const std::string why = reduction_mismatch(reduction); !why.empty()) {
      throw UsageError(fmt::format("{}: {}", to_string(collective), why));
    }
    element = static_cast<std::uint32_t>(element_size(reduction.type));
    if (size % element != 0) {
      throw UsageError(
          fmt::format("{}: {} bytes are not a whole number of {} elements ({} bytes "
                      "each)",
                      to_string(collective), size, to_string(reduction.type), element));
    }
  }
  if (is_uneven(collective)) size = largest_count(counts);
  check_buffer(collective, Buffer::Send, send.size(), setup_.rank, setup_.size, root, size, counts);
  check_buffer(collective, Buffer::Recv, recv.size(), setup_.rank, setup_.size, root, size, counts);
  // An even call's counts are empty: it allocates nothing here.
  const BuildParams asked{.root = root,
                          .size = size,
                          .segment = options.segment,
                          .wan_pairs = options.wan_pairs,
                          .element_size = element,
                          .counts = std::vector(counts.begin(), counts.end())};
  const Resolved resolved = resolve(collective, options, asked, reduction);
  const std::uint64_t sequence = ++sequence_;
  return {resolved.cached->schedule,
          resolved.cached->plan,
          {.sequence = sequence, .signature = resolved.signature, .reduction = reduction},
          {send, recv}};
}

CommunicatorImpl::Resolved CommunicatorImpl::resolve(Collective collective,
                                                     const CollectiveOptions& options,
                                                     const BuildParams& asked,
                                                     const Reduction& reduction) {
  for (const RecentCall& recent : recent_calls_) {
    if (recent.collective == collective && recent.algorithm == options.algorithm &&
        recent.asked == asked && recent.reduction == reduction) {
      return recent.resolved;
    }
  }
  const auto [algorithm, params] = resolve_algorithm(collective, options, asked);
  const CachedSchedule& cached = schedule_for(collective, algorithm, params);
  const Resolved resolved{
      .cached = &cached,
      .signature = is_reduction(collective)
                       ? runtime::call_signature(*cached.schedule, params, reduction)
                       : cached.signature};
  RecentCall recent{.collective = collective,
                    .algorithm = options.algorithm,
                    .asked = asked,
                    .reduction = reduction,
                    .resolved = resolved};
  if (recent_calls_.size() < kRecentCalls) {
    recent_calls_.push_back(std::move(recent));
  } else {
    recent_calls_[next_recent_] = std::move(recent);
    next_recent_ = (next_recent_ + 1) % kRecentCalls;
  }
  return resolved;
}

std::pair<std::string, BuildParams> CommunicatorImpl::resolve_algorithm(
    Collective collective, const CollectiveOptions& options, const BuildParams& asked) const {
  if (options.algorithm == "auto") {
    runtime::AlgorithmChoice choice =
        choose(collective, asked.size, asked.root, options, asked.element_size, asked.counts);
    return {std::move(choice.best.algorithm), std::move(choice.best.params)};
  }
  if (!find_algorithm(collective, options.algorithm)) {
    throw UsageError(unknown_algorithm_message(collective, options.algorithm, {"auto"}));
  }
  return {options.algorithm,
          runtime::resolve_params(setup_.platform, collective, options.algorithm, asked)};
}

auto CommunicatorImpl::call_operation(PreparedCall call, std::vector<std::byte>* scratch) {
  // Group ops (hier-shm) run on this node's shared-memory group, announced in call order.
  runtime::shm::GroupRunner* groups = nullptr;
  if (const std::size_t count = call.plan->group_order.size(); count > 0) {
    groups = group_runner();
    groups->expect(call.identity.sequence, count);
  }
  calls_in_flight_.fetch_add(1);
  return [this, call = std::move(call), groups, scratch](runtime::Completion done) mutable {
    runtime::start_schedule_run(engine(), std::move(call.schedule), std::move(call.plan),
                                setup_.platform, setup_.rank, call.buffers,
                                std::move(call.identity), std::move(done), groups,
                                &calls_in_flight_, scratch);
  };
}

std::shared_ptr<RequestState> CommunicatorImpl::start(
    Collective collective, std::span<const std::byte> send, std::span<std::byte> recv, int root,
    std::uint64_t size, const CollectiveOptions& options, const Reduction& reduction,
    std::span<const std::uint64_t> counts) {
  return start_in_background(call_operation(
      prepare(collective, send, recv, root, size, options, reduction, counts), nullptr));
}

std::shared_ptr<RequestState> CommunicatorImpl::start_sharing_counts(
    Collective collective, std::span<const std::byte> send, std::span<std::byte> recv, int root,
    std::vector<std::uint64_t> counts, const CollectiveOptions& options,
    std::function<void(std::string_view)> chosen) {
  check_usable();
  check_peer(root, "root");
  const auto p = static_cast<std::size_t>(setup_.size);
  const bool rows = collective == Collective::Alltoallv;
  if (!counts_held_apart(collective)) {
    throw UsageError(
        fmt::format("{}: every rank knows its counts; nothing to share", to_string(collective)));
  }
  if (counts.size() != (rows ? p * p : p)) {
    throw UsageError(fmt::format("{}: {} counts, but {} ranks need {}", to_string(collective),
                                 counts.size(), setup_.size, rows ? p * p : p));
  }
  // The counts travel in place: a bcast of the root's, or an allgather of every rank's row.
  auto shared = std::make_shared<std::vector<std::uint64_t>>(std::move(counts));
  std::shared_ptr<std::vector<std::uint64_t>> row;  // an allgather's input: this rank's row
  const std::span<std::byte> all = std::as_writable_bytes(std::span(*shared));
  PreparedCall exchange;
  if (rows) {
    const auto own = shared->begin() + static_cast<std::ptrdiff_t>(p) * setup_.rank;
    row = std::make_shared<std::vector<std::uint64_t>>(own, own + static_cast<std::ptrdiff_t>(p));
    exchange = prepare(Collective::Allgather, std::as_bytes(std::span(*row)), all, 0,
                       p * sizeof(std::uint64_t), {}, {}, {});
  } else {
    exchange = prepare(Collective::Bcast, {}, all, root, all.size(), {}, {}, {});
  }
  // The call's own number, taken now: calls made later have later ones. Counted in flight from
  // now, so that no later blocking call runs on the caller's thread before it began.
  const std::uint64_t sequence = ++sequence_;
  calls_in_flight_.fetch_add(1);
  auto start_exchange = call_operation(std::move(exchange), nullptr);
  return start_in_background([this, start_exchange = std::move(start_exchange), shared, row,
                              sequence, collective, send, recv, root, options,
                              chosen = std::move(chosen)](runtime::Completion done) mutable {
    engine().reserve_call(sequence);
    start_exchange([this, shared, row, sequence, collective, send, recv, root, options, chosen,
                    done = std::move(done)](const runtime::Outcome& exchanged) mutable {
      runtime::Outcome failed = exchanged;
      if (!failed) {
        failed =
            start_counted(collective, send, recv, root, *shared, options, sequence, chosen, done);
      }
      if (!failed) return;
      engine().end_call(sequence);
      calls_in_flight_.fetch_sub(1);
      done(failed);
    });
  });
}

runtime::Outcome CommunicatorImpl::start_counted(
    Collective collective, std::span<const std::byte> send, std::span<std::byte> recv, int root,
    std::span<const std::uint64_t> counts, const CollectiveOptions& options, std::uint64_t sequence,
    const std::function<void(std::string_view)>& chosen, runtime::Completion& done) {
  try {
    if (const auto error = counts_error(collective, setup_.size, counts)) throw UsageError(*error);
    const std::uint64_t size = largest_count(counts);
    check_buffer(collective, Buffer::Send, send.size(), setup_.rank, setup_.size, root, size,
                 counts);
    check_buffer(collective, Buffer::Recv, recv.size(), setup_.rank, setup_.size, root, size,
                 counts);
    const BuildParams asked{.root = root,
                            .size = size,
                            .segment = options.segment,
                            .wan_pairs = options.wan_pairs,
                            .counts = std::vector(counts.begin(), counts.end())};
    // Not from the caches, which belong to the caller's thread: such a call's counts rarely
    // come again anyway.
    const auto [algorithm, params] = resolve_algorithm(collective, options, asked);
    const CachedSchedule made = make_schedule(collective, algorithm, params);
    if (!made.plan->group_order.empty()) {
      // Its group ops would have to be announced in call order, before the counts are known.
      throw UsageError(
          fmt::format("{}: {} runs shared-memory steps, which a call that shares "
                      "its counts first cannot announce in time",
                      to_string(collective), algorithm));
    }
    if (chosen) chosen(algorithm);
    runtime::start_schedule_run(
        engine(), made.schedule, made.plan, setup_.platform, setup_.rank, {send, recv},
        {.sequence = sequence, .signature = made.signature, .reduction = {}}, std::move(done),
        nullptr, &calls_in_flight_, nullptr);
    return std::nullopt;
  } catch (const std::exception& e) {
    return runtime::Failure::of(e);
  }
}

bool CommunicatorImpl::run_here(const PreparedCall& call, runtime::Outcome& outcome) {
  if (calls_in_flight_.load() > 0) return false;
  // run_local_call() decides whether the call is local; a rank with group ops needs the runner
  // either way (call_operation() would make it).
  runtime::shm::GroupRunner* groups = call.plan->group_order.empty() ? nullptr : group_runner();
  const bool ran = runtime::run_local_call(*call.schedule, *call.plan, setup_.rank, call.buffers,
                                           call.identity, groups, blocking_scratch_, outcome);
  if (ran) engine().note_local_call(call.identity.sequence);
  return ran;
}

runtime::shm::GroupRunner* CommunicatorImpl::group_runner() {
  if (!groups_) {
    const Platform& p = setup_.platform;
    runtime::shm::GroupRunnerConfig config;
    config.job_id = setup_.job_id ^ group_key_;
    config.node_id = p.node_of(setup_.rank);
    config.local_size = 0;
    for (int r = 0; r < setup_.size; ++r) {
      if (p.node_of(r) != config.node_id) continue;
      if (r == setup_.rank) config.local_rank = config.local_size;
      ++config.local_size;
    }
    config.options.timeout = setup_.options.timeout;
    // Each communicator of the job has a group of its own: its calls meet in it alone.
    config.options.instance = space_ + runtime::kCallSpaces * generation_;
    // The file may not exist yet: the MPI library writes its routes to the same file at the end
    // of a run (docs/mpi.md).
    if (const char* file = std::getenv(runtime::shm::kTuningEnvironment);
        file && *file && std::filesystem::exists(file)) {
      config.tuning = runtime::shm::read_tuning_file(file);
      config.options.capacity = config.tuning.capacity_with(config.options.tuning);
    }
    groups_ = std::make_unique<runtime::shm::GroupRunner>(std::move(config));
  }
  return groups_.get();
}

void CommunicatorImpl::run(Collective collective, std::span<const std::byte> send,
                           std::span<std::byte> recv, int root, std::uint64_t size,
                           const CollectiveOptions& options, const Reduction& reduction,
                           std::span<const std::uint64_t> counts) {
  PreparedCall call = prepare(collective, send, recv, root, size, options, reduction, counts);
  if (runtime::Outcome outcome; run_here(call, outcome)) {
    if (outcome) fail(*outcome);
    return;
  }
  run_blocking(call_operation(std::move(call), &blocking_scratch_));
}

void CommunicatorImpl::barrier() {
  // A 1-byte allgather: nobody leaves before everybody arrived.
  std::byte token{1};
  barrier_tokens_.resize(static_cast<std::size_t>(setup_.size));
  run(Collective::Allgather, {&token, 1}, barrier_tokens_, 0, 1, {"recursive-doubling", 0, 0});
}

// --- Communicator: thin forwarding to the implementation ---------------------------------

Communicator::Communicator(std::unique_ptr<CommunicatorImpl> impl) : impl_(std::move(impl)) {}
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;
Communicator::~Communicator() = default;

int Communicator::rank() const {
  return impl_->rank();
}
int Communicator::size() const {
  return impl_->size();
}
const Platform& Communicator::platform() const {
  return impl_->platform();
}
const CommunicatorOptions& Communicator::options() const {
  return impl_->options();
}

void Communicator::send(std::span<const std::byte> data, int peer) {
  impl_->send(data, peer);
}

void Communicator::recv(std::span<std::byte> data, int peer) {
  impl_->recv(data, peer);
}

Request Communicator::isend(std::span<const std::byte> data, int peer) {
  return Request(impl_->start_send(data, peer));
}

Request Communicator::irecv(std::span<std::byte> data, int peer) {
  return Request(impl_->start_recv(data, peer));
}

void Communicator::barrier() {
  impl_->barrier();
}

void Communicator::bcast(std::span<std::byte> buffer, int root, const CollectiveOptions& options) {
  impl_->run(Collective::Bcast, {}, buffer, root, buffer.size(), options);
}

void Communicator::scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                           const CollectiveOptions& options) {
  impl_->run(Collective::Scatter, send, recv, root, recv.size(), options);
}

void Communicator::gather(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                          const CollectiveOptions& options) {
  impl_->run(Collective::Gather, send, recv, root, send.size(), options);
}

void Communicator::allgather(std::span<const std::byte> send, std::span<std::byte> recv,
                             const CollectiveOptions& options) {
  impl_->run(Collective::Allgather, send, recv, 0, send.size(), options);
}

void Communicator::alltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                            const CollectiveOptions& options) {
  impl_->run(Collective::Alltoall, send, recv, 0, alltoall_block(send.size()), options);
}

std::uint64_t Communicator::alltoall_block(std::size_t send_bytes) const {
  if (send_bytes % size() != 0) {
    throw UsageError(
        fmt::format("alltoall: the send buffer has {} bytes, not a multiple of the {} ranks",
                    send_bytes, size()));
  }
  return send_bytes / size();
}

void Communicator::reduce(std::span<const std::byte> send, std::span<std::byte> recv,
                          const Reduction& reduction, int root, const CollectiveOptions& options) {
  impl_->run(Collective::Reduce, send, recv, root, send.size(), options, reduction);
}

void Communicator::allreduce(std::span<const std::byte> send, std::span<std::byte> recv,
                             const Reduction& reduction, const CollectiveOptions& options) {
  impl_->run(Collective::Allreduce, send, recv, 0, send.size(), options, reduction);
}

void Communicator::reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                                  const Reduction& reduction, const CollectiveOptions& options) {
  impl_->run(Collective::ReduceScatter, send, recv, 0, recv.size(), options, reduction);
}

void Communicator::scan(std::span<const std::byte> send, std::span<std::byte> recv,
                        const Reduction& reduction, const CollectiveOptions& options) {
  impl_->run(Collective::Scan, send, recv, 0, send.size(), options, reduction);
}

void Communicator::exscan(std::span<const std::byte> send, std::span<std::byte> recv,
                          const Reduction& reduction, const CollectiveOptions& options) {
  impl_->run(Collective::Exscan, send, recv, 0, send.size(), options, reduction);
}

Request Communicator::ireduce(std::span<const std::byte> send, std::span<std::byte> recv,
                              const Reduction& reduction, int root,
                              const CollectiveOptions& options) {
  return irun(Collective::Reduce, send, recv, root, send.size(), options, reduction);
}

Request Communicator::iallreduce(std::span<const std::byte> send, std::span<std::byte> recv,
                                 const Reduction& reduction, const CollectiveOptions& options) {
  return irun(Collective::Allreduce, send, recv, 0, send.size(), options, reduction);
}

Request Communicator::ireduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                                      const Reduction& reduction,
                                      const CollectiveOptions& options) {
  return irun(Collective::ReduceScatter, send, recv, 0, recv.size(), options, reduction);
}

Request Communicator::iscan(std::span<const std::byte> send, std::span<std::byte> recv,
                            const Reduction& reduction, const CollectiveOptions& options) {
  return irun(Collective::Scan, send, recv, 0, send.size(), options, reduction);
}

Request Communicator::iexscan(std::span<const std::byte> send, std::span<std::byte> recv,
                              const Reduction& reduction, const CollectiveOptions& options) {
  return irun(Collective::Exscan, send, recv, 0, send.size(), options, reduction);
}

void Communicator::run(Collective collective, std::span<const std::byte> send,
                       std::span<std::byte> recv, int root, std::uint64_t size,
                       const CollectiveOptions& options, const Reduction& reduction) {
  impl_->run(collective, send, recv, root, size, options, reduction);
}

Request Communicator::irun(Collective collective, std::span<const std::byte> send,
                           std::span<std::byte> recv, int root, std::uint64_t size,
                           const CollectiveOptions& options, const Reduction& reduction) {
  return Request(impl_->start(collective, send, recv, root, size, options, reduction));
}

void Communicator::runv(Collective collective, std::span<const std::byte> send,
                        std::span<std::byte> recv, int root, std::span<const std::uint64_t> counts,
                        const CollectiveOptions& options, const Reduction& reduction) {
  impl_->run(collective, send, recv, root, largest_count(counts), options, reduction, counts);
}

void Communicator::reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                                  std::span<const std::uint64_t> counts, const Reduction& reduction,
                                  const CollectiveOptions& options) {
  runv(Collective::ReduceScatterv, send, recv, 0, counts, options, reduction);
}

Request Communicator::irunv(Collective collective, std::span<const std::byte> send,
                            std::span<std::byte> recv, int root,
                            std::span<const std::uint64_t> counts, const CollectiveOptions& options,
                            const Reduction& reduction) {
  return Request(impl_->start(collective, send, recv, root, largest_count(counts), options,
                              reduction, counts));
}

Request Communicator::irunv_sharing_counts(Collective collective, std::span<const std::byte> send,
                                           std::span<std::byte> recv, int root,
                                           std::vector<std::uint64_t> counts,
                                           const CollectiveOptions& options,
                                           std::function<void(std::string_view)> chosen) {
  return Request(impl_->start_sharing_counts(collective, send, recv, root, std::move(counts),
                                             options, std::move(chosen)));
}

Request Communicator::ibcast(std::span<std::byte> buffer, int root,
                             const CollectiveOptions& options) {
  return irun(Collective::Bcast, {}, buffer, root, buffer.size(), options);
}

Request Communicator::iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                               const CollectiveOptions& options) {
  return irun(Collective::Scatter, send, recv, root, recv.size(), options);
}

Request Communicator::igather(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                              const CollectiveOptions& options) {
  return irun(Collective::Gather, send, recv, root, send.size(), options);
}

Request Communicator::iallgather(std::span<const std::byte> send, std::span<std::byte> recv,
                                 const CollectiveOptions& options) {
  return irun(Collective::Allgather, send, recv, 0, send.size(), options);
}

Request Communicator::ialltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                                const CollectiveOptions& options) {
  return irun(Collective::Alltoall, send, recv, 0, alltoall_block(send.size()), options);
}

std::uint64_t Communicator::handed_off() const {
  return impl_->handed_off();
}

std::string Communicator::explain(Collective collective, std::uint64_t size, int root,
                                  std::uint32_t element_size) const {
  const BuildParams params{.root = root, .size = size, .element_size = element_size};
  return runtime::explain_choice(impl_->choose(collective, size, root, {}, element_size),
                                 collective, params, impl_->size());
}

std::string Communicator::resolve_algorithm(Collective collective, std::uint64_t size, int root,
                                            const CollectiveOptions& options,
                                            std::uint32_t element_size,
                                            std::span<const std::uint64_t> counts) const {
  if (options.algorithm != "auto") return options.algorithm;
  return impl_->choose(collective, size, root, options, element_size, counts).best.algorithm;
}

}  // namespace multilane
