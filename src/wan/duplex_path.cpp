// wan/duplex_path.cpp — a stream set driven by its own thread (see duplex_path.hpp).
//
// Only the driver thread touches the stream set once it runs: a caller posts the start of its
// operation onto the set's io_context and sleeps on a condition variable; the driver runs the
// context one handler at a time and, between handlers, retires operations that completed and
// fails the set (StreamSet::expire) when a posted operation made no progress for the timeout.
#include "wan/duplex_path.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/tcp/transport_error.hpp"

namespace multilane::wan {

using runtime::Clock;

namespace {

// One direction's operation, guarded by Impl::mutex.
struct Operation {
  bool waiting = false;  // a caller waits for it
  bool posted = false;   // started on the set
  bool done = false;
  std::uint64_t received = 0;
  std::exception_ptr error;
};

}  // namespace

struct DuplexPath::Impl {
  std::shared_ptr<asio::io_context> io = std::make_shared<asio::io_context>();
  std::unique_ptr<runtime::StreamSet> set;
  std::chrono::milliseconds timeout{60'000};
  std::string peer;
  int streams = 1;

  std::mutex send_turn;  // one sending caller at a time
  std::mutex recv_turn;  // one receiving caller at a time
  std::mutex mutex;
  std::condition_variable changed;
  Operation send_op, recv_op;
  bool stopping = false;
  std::thread driver;

  // Retires what completed; true when an operation is still in progress.
  bool settle() {
    bool active = false;
    if (send_op.posted && !send_op.done) {
      if (set->send_done()) {
        try {
          set->finish_send();
        } catch (...) {
          send_op.error = std::current_exception();
        }
        send_op.done = true;
        changed.notify_all();
      } else {
        active = true;
      }
    }
    if (recv_op.posted && !recv_op.done) {
      if (set->recv_done()) {
        try {
          recv_op.received = set->finish_recv();
        } catch (...) {
          recv_op.error = std::current_exception();
        }
        recv_op.done = true;
        changed.notify_all();
      } else {
        active = true;
      }
    }
    return active;
  }

  void drive() {
    auto work = asio::make_work_guard(*io);
    std::uint64_t last_progress = 0;
    auto deadline = Clock::time_point::max();
    for (;;) {
      io->run_one_for(std::chrono::milliseconds{50});
      std::lock_guard lock(mutex);
      if (stopping) return;
      // Setting up the path ran the context out of work, which leaves it stopped; only the
      // destructor stops it on purpose (after setting `stopping`).
      if (io->stopped()) io->restart();
      if (!settle()) {
        deadline = Clock::time_point::max();
        continue;
      }
      const auto now = Clock::now();
      const std::uint64_t progress = set->progress();
      if (deadline == Clock::time_point::max() || progress != last_progress) {
        last_progress = progress;
        deadline = now + timeout;
      } else if (now >= deadline) {
        set->expire();  // the operations now complete with the timeout's error
        deadline = Clock::time_point::max();
      }
    }
  }

  // Posts `start` for `op` onto the driver's thread.
  template <typename Start>
  void post(Operation& op, Start start) {
    op = {};
    op.waiting = true;
    asio::post(*io, [this, &op, start]() {
      std::lock_guard lock(mutex);
      try {
        start();
        op.posted = true;
      } catch (...) {
        op.error = std::current_exception();
        op.done = true;
        changed.notify_all();
      }
    });
  }

  // Waits for `op`; the driver completes every posted operation by the set's timeout, and the
  // margin only catches a driver that stopped.
  void wait(std::unique_lock<std::mutex>& lock, Operation& op) {
    const auto limit = timeout + std::chrono::seconds{30};
    if (!changed.wait_for(lock, limit, [&] { return op.done || stopping; })) {
      throw runtime::TransportError(
          ErrorKind::timeout,
          fmt::format("{}: no answer from the path's driver for {} s", peer,
                      std::chrono::duration_cast<std::chrono::seconds>(limit).count()));
    }
    op.waiting = false;
    if (!op.done) {
      throw runtime::TransportError(ErrorKind::usage, fmt::format("{}: the path was closed", peer));
    }
    if (op.error) std::rethrow_exception(op.error);
  }
};

namespace {

std::unique_ptr<DuplexPath::Impl> make_impl(const runtime::StreamOptions& options) {
  auto impl = std::make_unique<DuplexPath::Impl>();
  impl->timeout = options.timeout;
  impl->streams = options.streams;
  return impl;
}

}  // namespace

DuplexPath::DuplexPath(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->peer = impl_->set->peer();
  impl_->driver = std::thread([impl = impl_.get()] { impl->drive(); });
}

std::unique_ptr<DuplexPath> DuplexPath::connect(const PathTarget& target,
                                                const runtime::StreamOptions& options) {
  auto impl = make_impl(options);
  auto path = connect_path(*impl->io, target, options);
  impl->set = std::make_unique<runtime::StreamSet>(impl->io, std::move(path.sockets), path.options);
  return std::unique_ptr<DuplexPath>(new DuplexPath(std::move(impl)));
}

std::unique_ptr<DuplexPath> DuplexPath::accept(runtime::StreamListener& listener,
                                               const runtime::StreamOptions& options) {
  auto impl = make_impl(options);
  auto path = accept_path(*impl->io, listener, options);
  impl->set = std::make_unique<runtime::StreamSet>(impl->io, std::move(path.sockets), path.options);
  return std::unique_ptr<DuplexPath>(new DuplexPath(std::move(impl)));
}

DuplexPath::~DuplexPath() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    impl_->changed.notify_all();
  }
  impl_->io->stop();
  impl_->driver.join();
  // The set's destructor drives the context itself (it waits for unacknowledged bytes).
  impl_->io->restart();
  impl_->set.reset();
}

std::uint64_t DuplexPath::exchange(std::optional<std::span<const std::byte>> data,
                                   std::optional<std::span<std::byte>> buffer,
                                   runtime::ReceiveSize size) {
  Impl& m = *impl_;
  std::unique_lock<std::mutex> send_turn(m.send_turn, std::defer_lock);
  std::unique_lock<std::mutex> recv_turn(m.recv_turn, std::defer_lock);
  if (data && buffer) {
    std::lock(send_turn, recv_turn);
  } else if (data) {
    send_turn.lock();
  } else if (buffer) {
    recv_turn.lock();
  } else {
    return 0;
  }
  std::unique_lock lock(m.mutex);
  if (m.stopping) {
    throw runtime::TransportError(ErrorKind::usage, fmt::format("{}: the path was closed", m.peer));
  }
  if (buffer) {
    m.post(m.recv_op, [&m, b = *buffer, size] { m.set->start_recv(b, 0, size); });
  }
  if (data) {
    m.post(m.send_op, [&m, d = *data] { m.set->start_send(d); });
  }
  // Both directions run to their end before either error is thrown, so neither buffer is
  // referred to after the call.
  std::exception_ptr failure;
  std::uint64_t received = 0;
  if (buffer) {
    try {
      m.wait(lock, m.recv_op);
      received = m.recv_op.received;
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (data) {
    try {
      m.wait(lock, m.send_op);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return received;
}

std::string DuplexPath::peer() const {
  return impl_->peer;
}

int DuplexPath::streams() const {
  return impl_->streams;
}

}  // namespace multilane::wan
