// runtime/shm/group_runner.cpp — see group_runner.hpp.
#include "runtime/shm/group_runner.hpp"

#include <exception>

namespace multilane::runtime::shm {

GroupRunner::GroupRunner(GroupRunnerConfig config)
    : config_(std::move(config)), thread_([this] { loop(); }) {}

GroupRunner::~GroupRunner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void GroupRunner::expect(std::uint64_t sequence, std::size_t count) {
  if (count == 0) return;
  std::lock_guard lock(mutex_);
  expected_.push_back({sequence, count, 0, false});
}

void GroupRunner::submit(std::uint64_t sequence, std::size_t k, Job job, Done done) {
  submitted_count_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    submitted_.emplace(Key{sequence, k}, std::make_pair(std::move(job), std::move(done)));
  }
  wake_.notify_one();
}

void GroupRunner::cancel(std::uint64_t sequence, const Failure& reason) {
  std::vector<Done> dropped;
  {
    std::lock_guard lock(mutex_);
    for (Expected& e : expected_.entries()) {
      if (e.sequence == sequence) e.cancelled = true;
    }
    const auto first = submitted_.lower_bound(Key{sequence, 0});
    const auto last = submitted_.lower_bound(Key{sequence + 1, 0});
    for (auto it = first; it != last; ++it) dropped.push_back(std::move(it->second.second));
    submitted_.erase(first, last);
  }
  wake_.notify_one();
  for (const Done& done : dropped) done(reason);
}

void GroupRunner::interrupt(const Failure& reason) {
  if (ShmGroup* group = group_seen_.load()) group->interrupt(reason);
}

template <typename Mine>
bool GroupRunner::run_in_turn(Mine&& mine, const Job& job, Outcome& outcome) {
  {
    std::lock_guard lock(mutex_);
    drop_finished_calls();
    if (busy_ || stopping_ || !mine()) return false;
    busy_ = true;
  }
  outcome = run_one(job);
  bool waiting = false;
  {
    std::lock_guard lock(mutex_);
    busy_ = false;
    waiting = !submitted_.empty();
  }
  if (waiting) wake_.notify_one();  // a job submitted meanwhile waits for the turn
  return true;
}

bool GroupRunner::run_here(const Job& job, Outcome& outcome) {
  return run_in_turn([this] { return expected_.empty(); }, job, outcome);
}

bool GroupRunner::run_here(std::uint64_t sequence, std::size_t k, const Job& job,
                           Outcome& outcome) {
  return run_in_turn(
      [&] {
        if (expected_.empty()) return false;
        Expected& head = expected_.front();
        if (head.sequence != sequence || head.next != k) return false;
        ++head.next;
        return true;
      },
      job, outcome);
}

void GroupRunner::drop_finished_calls() {
  while (!expected_.empty() &&
         (expected_.front().cancelled || expected_.front().next == expected_.front().count)) {
    expected_.pop_front();
  }
}

bool GroupRunner::next_job(std::unique_lock<std::mutex>& lock, std::pair<Job, Done>& job) {
  for (;;) {
    drop_finished_calls();
    if (!expected_.empty() && !busy_) {
      Expected& head = expected_.front();
      if (auto it = submitted_.find(Key{head.sequence, head.next}); it != submitted_.end()) {
        job = std::move(it->second);
        submitted_.erase(it);
        ++head.next;
        busy_ = true;
        return true;
      }
    }
    if (stopping_) return false;
    wake_.wait(lock);
  }
}

Outcome GroupRunner::run_one(const Job& job) {
  try {
    if (!group_) {
      group_ = std::make_unique<ShmGroup>(config_.job_id, config_.node_id, config_.local_rank,
                                          config_.local_size, config_.options);
      group_seen_.store(group_.get());
    }
    job(*group_);
    return std::nullopt;
  } catch (const std::exception& e) {
    return Failure::of(e);
  }
}

void GroupRunner::loop() {
  for (;;) {
    std::pair<Job, Done> job;
    {
      std::unique_lock lock(mutex_);
      if (!next_job(lock, job)) break;
    }
    const Outcome outcome = run_one(job.first);
    {
      std::lock_guard lock(mutex_);
      busy_ = false;
    }
    job.second(outcome);
  }
  group_seen_.store(nullptr);
  group_.reset();  // leaves the group (on this thread, where it was made)
}

}  // namespace multilane::runtime::shm
