// runtime/api/communicator_impl.hpp — what a Communicator is made of (internal).
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "multilane/communicator.hpp"
#include "runtime/api/algorithm_choice.hpp"
#include "runtime/api/job_sharing.hpp"
#include "runtime/api/request_state.hpp"
#include "runtime/exec/schedule_run.hpp"
#include "runtime/launch/address_book.hpp"
#include "runtime/shm/group_runner.hpp"
#include "runtime/transport/call_space.hpp"
#include "runtime/transport/engine.hpp"

namespace multilane {

// Everything a rank needs to join a job, however it was started.
struct CommunicatorSetup {
  int rank = 0;
  int size = 1;
  std::uint64_t job_id = 0;
  runtime::JobSecret secret;
  Platform platform;  // with exactly `size` ranks placed
  CommunicatorOptions options;
  std::string host = "127.0.0.1";  // listening address of lanes the platform gives none
};

// The platform a job of `size` ranks runs on: the file's (re-placed block-wise when it holds
// another number of ranks) or, without a file, one site with one single-lane node per rank.
Platform job_platform(const std::string& platform_file, int size);

// What the communicators that share a job have in common (call_space.hpp): the engine, with
// its threads, listeners and connections, and where each call space's numbering stands. A
// space taken again goes on from there: the engines of every rank remember its calls.
struct SharedJob {
  struct Space {
    bool in_use = false;
    std::uint64_t sequence = 0;           // the last collective call's sequence number
    std::vector<std::uint64_t> sent;      // point-to-point messages sent to each peer
    std::vector<std::uint64_t> received;  // ... and receives posted from each peer
    std::uint32_t generation = 0;         // communicators that had the space before
  };
  std::unique_ptr<runtime::Engine> engine;
  int ranks = 0;     // the job's
  std::mutex mutex;  // guards the rest
  std::array<Space, runtime::kCallSpaces> spaces;
  int communicators = 0;
  // Its communicators may have calls in flight on several threads at once (then no blocking
  // call may block in its own shared-memory steps while it drives the engine).
  bool concurrent_calls = false;
  // What Engine::set_shared() says (under `mutex`).
  bool engine_shared() const { return communicators > 1 && concurrent_calls; }
};

class CommunicatorImpl {
 public:
  // Listens, publishes this rank's addresses in `book`, and looks up every peer's: a new job,
  // whose call space 0 this communicator has.
  CommunicatorImpl(CommunicatorSetup setup, runtime::AddressBook& book);
  // Shares the job of `member` in call space `space`, which no communicator of the job may have
  // (throws UsageError otherwise). Local: every rank of the new communicator must do it with the
  // same space. `concurrent_calls`, `membership` (null: the member's ranks; else one that
  // check_membership() passed): see JobSharing::share().
  CommunicatorImpl(const CommunicatorImpl& member, std::uint32_t space, bool concurrent_calls,
                   const runtime::JobMembership* membership = nullptr);
  // Throws UsageError naming what in `membership` does not fit the job of `member`.
  static void check_membership(const CommunicatorImpl& member,
                               const runtime::JobMembership& membership);
  runtime::CallNumbering numbering() const { return {sequence_, generation_}; }
  void continue_numbering(runtime::CallNumbering agreed);
  ~CommunicatorImpl();

  std::uint64_t job_id() const { return setup_.job_id; }
  const std::shared_ptr<SharedJob>& shared_job() const { return job_; }

  int rank() const { return setup_.rank; }
  int size() const { return setup_.size; }
  const Platform& platform() const { return setup_.platform; }
  const CommunicatorOptions& options() const { return setup_.options; }

  std::shared_ptr<RequestState> start_send(std::span<const std::byte> data, int peer);
  std::shared_ptr<RequestState> start_recv(std::span<std::byte> data, int peer);
  void send(std::span<const std::byte> data, int peer);
  void recv(std::span<std::byte> data, int peer);
  // Starts a collective call (sequence number taken now, in call order) and returns at once.
  // `reduction` is read by reductions only; `counts` by the v-forms, whose `size` is the
  // largest count.
  std::shared_ptr<RequestState> start(Collective collective, std::span<const std::byte> send,
                                      std::span<std::byte> recv, int root, std::uint64_t size,
                                      const CollectiveOptions& options,
                                      const Reduction& reduction = {},
                                      std::span<const std::uint64_t> counts = {});
  // Communicator::irunv_sharing_counts().
  std::shared_ptr<RequestState> start_sharing_counts(Collective collective,
                                                     std::span<const std::byte> send,
                                                     std::span<std::byte> recv, int root,
                                                     std::vector<std::uint64_t> counts,
                                                     const CollectiveOptions& options,
                                                     std::function<void(std::string_view)> chosen);
  void run(Collective collective, std::span<const std::byte> send, std::span<std::byte> recv,
           int root, std::uint64_t size, const CollectiveOptions& options,
           const Reduction& reduction = {}, std::span<const std::uint64_t> counts = {});
  void barrier();
  // Waits for the operation and throws its error (a failure broke the communicator as it
  // completed).
  void wait(RequestState& state);

  // The model's choice for a call, kept per distinct call of even size; a v-form's (its counts
  // may differ at every call) is made afresh. Thread-safe.
  runtime::AlgorithmChoice choose(Collective collective, std::uint64_t size, int root,
                                  const CollectiveOptions& options, std::uint32_t element_size = 1,
                                  std::span<const std::uint64_t> counts = {}) const;

  std::uint64_t handed_off() const {
    return handed_off_.load(std::memory_order_relaxed) + (groups_ ? groups_->submitted() : 0);
  }

  // Keeps alive whatever serves the address book (the rendezvous of rank 0).
  std::shared_ptr<void> keep_alive;

 private:
  void check_usable() const;
  void mark_broken(const runtime::Failure& failure);
  // Breaks the communicator with `failure` and throws it.
  [[noreturn]] void fail(const runtime::Failure& failure);
  runtime::Completion completion(std::shared_ptr<RequestState> state);
  void check_peer(int peer, const char* what) const;
  // A call's schedule, made once per distinct call.
  struct CachedSchedule {
    std::shared_ptr<const Schedule> schedule;
    std::shared_ptr<const runtime::RankPlan> plan;  // this rank's
    std::uint64_t signature = 0;                    // call_signature() without a reduction
  };
  const CachedSchedule& schedule_for(Collective collective, std::string_view algorithm,
                                     const BuildParams& params);
  CachedSchedule make_schedule(Collective collective, std::string_view algorithm,
                               const BuildParams& params) const;
  // The algorithm and parameters a call's options and asked parameters come to ("auto" decided,
  // the segment chosen). Thread-safe.
  std::pair<std::string, BuildParams> resolve_algorithm(Collective collective,
                                                        const CollectiveOptions& options,
                                                        const BuildParams& asked) const;
  // What a call's algorithm option and parameters resolve to: the algorithm's schedule (built
  // with the segment chosen, "auto" decided) and the call's signature.
  struct Resolved {
    const CachedSchedule* cached = nullptr;
    std::uint64_t signature = 0;
  };
  Resolved resolve(Collective collective, const CollectiveOptions& options,
                   const BuildParams& asked, const Reduction& reduction);
  // A collective call with its arguments checked, schedule chosen and sequence number taken.
  struct PreparedCall {
    std::shared_ptr<const Schedule> schedule;
    std::shared_ptr<const runtime::RankPlan> plan;
    runtime::CallIdentity identity;
    runtime::CallBuffers buffers;
  };
  PreparedCall prepare(Collective collective, std::span<const std::byte> send,
                       std::span<std::byte> recv, int root, std::uint64_t size,
                       const CollectiveOptions& options, const Reduction& reduction,
                       std::span<const std::uint64_t> counts);
  // The call as an engine operation (its group ops announced, counted in flight).
  // (A callable an Operation can hold; called once.)
  // `scratch`: where a blocking call works (start_schedule_run()); null for a nonblocking one.
  auto call_operation(PreparedCall call, std::vector<std::byte>* scratch);
  // Engine thread: starts call `sequence` of start_sharing_counts() once its counts are here
  // (`done` taken), or returns why it cannot (`done` left).
  runtime::Outcome start_counted(Collective collective, std::span<const std::byte> send,
                                 std::span<std::byte> recv, int root,
                                 std::span<const std::uint64_t> counts,
                                 const CollectiveOptions& options, std::uint64_t sequence,
                                 const std::function<void(std::string_view)>& chosen,
                                 runtime::Completion& done);
  // A point-to-point message to or from `peer`, checked and numbered.
  runtime::SendRequest send_request(std::span<const std::byte> data, int peer);
  runtime::RecvRequest recv_request(std::span<std::byte> data, int peer);
  // Starts the operation on the engine's progress thread.
  std::shared_ptr<RequestState> start_in_background(runtime::Operation operation);
  // Runs the operation on this thread when the engine is free, else in the background, and
  // waits for it; throws its error (which broke the communicator).
  // `start`: a callable an Operation could hold.
  template <typename Start>
  void run_blocking(Start&& start);
  // Runs a blocking call on this thread when its part here is local to the node and nothing
  // else is in flight (local_call.hpp): true with its outcome; false when it must be launched.
  bool run_here(const PreparedCall& call, runtime::Outcome& outcome);
  // The runner of this rank's shared-memory group, made at the first schedule with group ops.
  runtime::shm::GroupRunner* group_runner();
  runtime::Engine& engine() const { return *job_->engine; }
  // Takes call space `space` of the job (constructors), gives it back (destructor).
  void take_space(std::uint32_t space);
  void give_space_back();

  CommunicatorSetup setup_;
  std::atomic<int> calls_in_flight_{0};       // launched collective calls not yet complete
  std::atomic<std::uint64_t> handed_off_{0};  // operations started in the background
  mutable std::mutex broken_mutex_;           // failures complete on the engine's thread
  runtime::Outcome broken_;                   // the first failure, nullopt while usable
  std::atomic<bool> broken_flag_{false};      // broken_ is set: a usable call takes no lock
  // The blocking calls' scratch space (one blocking call at a time), kept from call to call.
  std::vector<std::byte> blocking_scratch_;
  std::vector<std::byte> barrier_tokens_;  // a barrier's receive buffer, kept from call to call
  std::shared_ptr<SharedJob> job_;
  // JobMembership::job_ranks (empty: the job's ranks in their order), and this rank's.
  std::vector<int> job_ranks_;
  int job_rank_ = 0;
  int job_rank_of(int rank) const {
    return job_ranks_.empty() ? rank : job_ranks_[static_cast<std::size_t>(rank)];
  }
  // Sets this communicator's shared-memory groups apart from those of another communicator of
  // other ranks in the same space (0 for the job's ranks in their order).
  std::uint64_t group_key_ = 0;
  std::uint32_t space_ = 0;              // this communicator's call space in the job
  std::uint32_t generation_ = 0;         // of the space: tells its shared-memory groups apart
  std::vector<std::uint64_t> sent_;      // point-to-point messages sent to each peer
  std::vector<std::uint64_t> received_;  // ... and receives posted from each peer
  std::uint64_t sequence_ = 0;           // the last collective call's sequence number
  using ScheduleKey = std::tuple<Collective, std::string, int, std::uint64_t, std::uint64_t, int,
                                 std::uint32_t, std::vector<std::uint64_t>>;
  // Even calls' schedules are never erased (Resolved points into it); a v-form's counts may
  // differ at every call, so only the last kUnevenSchedules of those are kept, and
  // forget_schedule() drops the recent calls that point to one it erases.
  std::map<ScheduleKey, CachedSchedule> schedules_;
  static constexpr std::size_t kUnevenSchedules = 32;
  std::deque<ScheduleKey> uneven_schedules_;  // their keys, oldest first
  void forget_schedule(const ScheduleKey& key);
  // Recent calls as asked and as resolved: an application's loop repeats a few calls (a bcast,
  // an allreduce and a barrier, say), and one repeated skips the algorithm's lookup, its
  // segment's choice, the cache's search and a reduction's signature, and allocates nothing.
  struct RecentCall {
    Collective collective{};
    std::string algorithm;
    BuildParams asked;
    Reduction reduction;
    Resolved resolved;
  };
  static constexpr std::size_t kRecentCalls = 16;
  std::vector<RecentCall> recent_calls_;  // up to kRecentCalls, replaced round robin
  std::size_t next_recent_ = 0;
  using ChoiceKey = std::tuple<Collective, std::uint64_t, int, std::uint64_t, int, std::uint32_t>;
  mutable std::mutex choices_mutex_;
  mutable std::map<ChoiceKey, runtime::AlgorithmChoice> choices_;
  std::unique_ptr<runtime::shm::GroupRunner> groups_;  // after job_: destroyed before it
};

}  // namespace multilane
