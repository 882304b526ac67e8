// runtime/api/request_state.cpp — see request_state.hpp; also the public Request.
#include "runtime/api/request_state.hpp"

#include "multilane/communicator.hpp"

namespace multilane {

void RequestState::complete(const std::string& error) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    error_ = error;
  }
  changed_.notify_all();
}

std::string RequestState::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return done_; });
  return error_;
}

bool RequestState::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

std::string RequestState::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

Request::Request(std::shared_ptr<RequestState> state) : state_(std::move(state)) {}

bool Request::test() {
  if (!state_) throw UsageError("test() on an empty Request");
  if (!state_->done()) return false;
  if (auto error = state_->error(); !error.empty()) throw CommunicationError(error);
  return true;
}

void Request::wait() {
  if (!state_) throw UsageError("wait() on an empty Request");
  if (auto error = state_->wait(); !error.empty()) throw CommunicationError(error);
}

}  // namespace multilane
