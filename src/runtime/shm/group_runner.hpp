// runtime/shm/group_runner.hpp — runs a rank's group operations (schedule.hpp's Group* ops)
// on its node's ShmGroup, on a thread of its own.
//
// The schedule executor (runtime/exec/schedule_run.hpp) runs on the engine's driving thread, which
// must never block; a group call blocks until every rank of the node has joined it. So each
// group op is handed to this runner. Every rank of a node must run the same group calls in the
// same order, also when several collective calls are in flight: the runner runs them strictly
// in the order (call sequence, k-th group op of the call). expect() announces a call's group
// ops in call order (the order the calls were started, the same on every rank); submit() hands
// over one op once its dependencies are done, in any order; cancel() gives up the rest of a
// failed call, so that later calls are not held up.
//
// The ShmGroup is made at the first job (every rank of the node makes it at its first group
// call, so the setup meets), on the thread that runs that job, and destroyed on the runner's
// thread when the runner is. One job runs at a time, on the runner's thread or, through
// run_here(), on a caller's.
// interrupt() is thread-safe: it breaks the group, so a job waiting on other ranks fails at
// once (and so do the other ranks of the node).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/shm/shm_group.hpp"
#include "runtime/shm/tuning_file.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "support/reused_queue.hpp"

namespace multilane::runtime::shm {

struct GroupRunnerConfig {
  std::uint64_t job_id = 0;
  int node_id = 0;
  int local_rank = 0;
  int local_size = 1;
  ShmOptions options;  // options.capacity must fit every entry of `tuning`
  TuningTable tuning;  // per collective and size; calls it does not cover use options.tuning
};

class GroupRunner {
 public:
  using Job = std::function<void(ShmGroup&)>;
  using Done = std::function<void(const Outcome& outcome)>;

  explicit GroupRunner(GroupRunnerConfig config);
  ~GroupRunner();
  GroupRunner(const GroupRunner&) = delete;
  GroupRunner& operator=(const GroupRunner&) = delete;

  const GroupRunnerConfig& config() const { return config_; }

  // Call `sequence` will submit `count` group ops (calls announced in increasing order).
  void expect(std::uint64_t sequence, std::size_t count);
  // Op `k` of call `sequence`; `done` gets its outcome, on the runner's thread.
  void submit(std::uint64_t sequence, std::size_t k, Job job, Done done);
  // Jobs submitted to the runner's thread so far (run_here() adds none). Thread-safe.
  std::uint64_t submitted() const { return submitted_count_.load(std::memory_order_relaxed); }
  // The call's ops not yet run are dropped: their `done` gets `reason` at once (on the calling
  // thread); ops not submitted yet will not be run.
  void cancel(std::uint64_t sequence, const Failure& reason);
  // Breaks the group with `reason` (thread-safe; nothing happens before the group exists).
  void interrupt(const Failure& reason);
  // Runs `job` on the calling thread when no group op is queued or running: returns true with
  // its outcome in `outcome`; false, having done nothing, when the runner is busy.
  // This spares a call that is local to the node (a blocking call whose ops on this rank are
  // all group ops and copies) two thread hand-overs each way.
  bool run_here(const Job& job, Outcome& outcome);
  // Runs op `k` of call `sequence` (expected, not submitted) on the calling thread when it is
  // the next op in order and nothing runs: true with its outcome; false, having done nothing,
  // otherwise (then submit() it). A blocking call whose only remaining work here is its group
  // ops runs them so, without handing each to the runner's thread and back.
  bool run_here(std::uint64_t sequence, std::size_t k, const Job& job, Outcome& outcome);

 private:
  struct Expected {
    std::uint64_t sequence = 0;
    std::size_t count = 0;
    std::size_t next = 0;
    bool cancelled = false;
  };
  using Key = std::pair<std::uint64_t, std::size_t>;

  void loop();
  // Takes the turn for a job on the caller's thread when `mine` says it is this caller's
  // (mutex held inside), runs it and gives the turn back.
  template <typename Mine>
  bool run_in_turn(Mine&& mine, const Job& job, Outcome& outcome);
  // Forgets the calls at the head whose ops have all been run or were cancelled (mutex held).
  void drop_finished_calls();
  // The next job to run, or false when stopping (mutex held).
  bool next_job(std::unique_lock<std::mutex>& lock, std::pair<Job, Done>& job);
  Outcome run_one(const Job& job);

  GroupRunnerConfig config_;
  std::unique_ptr<ShmGroup> group_;             // only by whoever holds the turn (busy_)
  std::atomic<ShmGroup*> group_seen_{nullptr};  // group_, for interrupt() from other threads
  std::mutex mutex_;
  std::atomic<std::uint64_t> submitted_count_{0};
  std::condition_variable wake_;
  ReusedQueue<Expected> expected_;
  std::map<Key, std::pair<Job, Done>> submitted_;
  bool stopping_ = false;
  bool busy_ = false;  // a job is running (on the runner's thread or in run_here())
  std::thread thread_;
};

}  // namespace multilane::runtime::shm
