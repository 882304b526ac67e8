// wan/exchange.cpp — several stream sets driven by one thread (see exchange.hpp).
#include "wan/exchange.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "multilane/errors.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::wan {

using runtime::Clock;
using runtime::StreamSet;

namespace {

// A set's timeout counts from its last progress.
struct Watch {
  StreamSet* set = nullptr;
  std::uint64_t progress = 0;
  Clock::time_point deadline;
};

template <typename Ops>
void check_once(const Ops& ops, std::string_view direction) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].set == nullptr) throw UsageError("exchange: a null stream set");
    for (std::size_t j = 0; j < i; ++j) {
      if (ops[j].set == ops[i].set) {
        throw UsageError(fmt::format("one path appears twice among the {} of a call", direction));
      }
    }
  }
}

}  // namespace

void drive(asio::io_context& io, std::span<StreamSet* const> sets,
           const std::function<bool()>& done) {
  std::vector<Watch> watches;
  for (StreamSet* set : sets)
    watches.push_back({set, set->progress(), Clock::now() + set->timeout()});
  while (!done()) {
    Clock::time_point earliest = Clock::time_point::max();
    for (const Watch& w : watches) earliest = std::min(earliest, w.deadline);
    if (runtime::run_until(io, earliest, done)) return;
    const auto now = Clock::now();
    for (Watch& w : watches) {
      const std::uint64_t progress = w.set->progress();
      if (progress != w.progress) {
        w.progress = progress;
        w.deadline = now + w.set->timeout();
      } else if (now >= w.deadline) {
        w.set->expire();
        w.deadline = Clock::time_point::max();
      }
    }
  }
}

void exchange(asio::io_context& io, std::span<const SendOp> sends, std::span<RecvOp> receives) {
  check_once(sends, "sends");
  check_once(receives, "receives");
  std::vector<StreamSet*> sets;
  std::exception_ptr failure;
  std::vector<bool> recv_started(receives.size()), send_started(sends.size());
  auto note = [&failure] {
    if (!failure) failure = std::current_exception();
  };
  for (std::size_t i = 0; i < receives.size(); ++i) {
    try {
      receives[i].set->start_recv(receives[i].buffer, 0, receives[i].size);
      recv_started[i] = true;
      sets.push_back(receives[i].set);
    } catch (...) {
      note();
    }
  }
  for (std::size_t i = 0; i < sends.size(); ++i) {
    try {
      sends[i].set->start_send(sends[i].data);
      send_started[i] = true;
      if (std::find(sets.begin(), sets.end(), sends[i].set) == sets.end()) {
        sets.push_back(sends[i].set);
      }
    } catch (...) {
      note();
    }
  }
  drive(io, sets, [&] {
    return std::all_of(sets.begin(), sets.end(),
                       [](const StreamSet* s) { return s->send_done() && s->recv_done(); });
  });
  for (std::size_t i = 0; i < receives.size(); ++i) {
    if (!recv_started[i]) continue;
    try {
      receives[i].received = receives[i].set->finish_recv();
    } catch (const runtime::TransportError&) {
      note();
    }
  }
  for (std::size_t i = 0; i < sends.size(); ++i) {
    if (!send_started[i]) continue;
    try {
      sends[i].set->finish_send();
    } catch (const runtime::TransportError&) {
      note();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace multilane::wan
