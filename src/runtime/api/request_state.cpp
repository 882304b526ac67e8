// runtime/api/request_state.cpp — see request_state.hpp; also the public Request.
#include "runtime/api/request_state.hpp"

#include "multilane/communicator.hpp"

namespace multilane {

void RequestState::complete(const runtime::Outcome& outcome) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    outcome_ = outcome;
  }
  changed_.notify_all();
}

runtime::Outcome RequestState::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return done_; });
  return outcome_;
}

bool RequestState::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

runtime::Outcome RequestState::outcome() const {
  std::lock_guard lock(mutex_);
  return outcome_;
}

Request::Request(std::shared_ptr<RequestState> state) : state_(std::move(state)) {}

bool Request::test() {
  if (!state_) throw UsageError("test() on an empty Request");
  if (!state_->done()) return false;
  if (const runtime::Outcome outcome = state_->outcome()) outcome->raise();
  return true;
}

void Request::wait() {
  if (!state_) throw UsageError("wait() on an empty Request");
  if (const runtime::Outcome outcome = state_->wait()) outcome->raise();
}

}  // namespace multilane
