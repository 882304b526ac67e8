// wan/message_relay.cpp — double-buffered message forwarding (see message_relay.hpp).
#include "wan/message_relay.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include "multilane/errors.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/exchange.hpp"

namespace multilane::wan {

using runtime::StreamSet;

namespace {

// One direction of a pair: receive from `from` into a free buffer, send filled buffers on `to`.
struct Direction {
  StreamSet* from = nullptr;
  StreamSet* to = nullptr;
  std::array<std::unique_ptr<std::byte[]>, 2> buffers;
  std::array<std::uint64_t, 2> sizes{};
  int receiving = -1;  // buffer with a posted receive
  int sending = -1;    // buffer with a posted send
  std::deque<int> filled;
  bool source_gone = false;  // the peer of `from` left
  bool sink_gone = false;    // the peer of `to` left: nothing more can be delivered

  bool flushed() const { return sink_gone || (sending < 0 && filled.empty()); }
  bool has_transition() const {
    return (receiving >= 0 && from->recv_done()) || (sending >= 0 && to->send_done());
  }
  int free_buffer() const {
    for (int b = 0; b < 2; ++b) {
      const bool queued = std::find(filled.begin(), filled.end(), b) != filled.end();
      if (b != receiving && b != sending && !queued) return b;
    }
    return -1;
  }
};

// Runs `operation` on a set; a failure because the set's peer left sets `gone` instead of
// propagating (the pair then ends), any other failure propagates.
template <typename Operation>
void tolerate_departure(StreamSet* set, bool& gone, Operation operation) {
  try {
    operation();
  } catch (const runtime::TransportError&) {
    if (!set->peer_gone()) throw;
    gone = true;
  }
}

class Relay {
 public:
  Relay(std::span<const SetPair> pairs, std::uint64_t max_message) : max_message_(max_message) {
    for (const auto& [a, b] : pairs) {
      if (a == nullptr || b == nullptr || a == b) {
        throw UsageError("relay: a pair needs two different paths");
      }
      Pair pair;
      pair.forward.from = pair.backward.to = a;
      pair.forward.to = pair.backward.from = b;
      pairs_.push_back(std::move(pair));
      sets_.push_back(a);
      sets_.push_back(b);
    }
    for (std::size_t i = 0; i < sets_.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (sets_[i] == sets_[j]) throw UsageError("relay: a path appears in two pairs");
      }
    }
  }

  RelayTotals run(asio::io_context& io) {
    while (true) {
      step_all();
      if (failure_) break;
      if (std::all_of(pairs_.begin(), pairs_.end(), [](const Pair& p) { return p.closed; })) break;
      drive(io, sets_, [this] { return any_transition(); });
    }
    if (failure_) {
      for (StreamSet* set : sets_) set->close();
      std::rethrow_exception(failure_);
    }
    return totals_;
  }

 private:
  struct Pair {
    Direction forward;
    Direction backward;
    bool closed = false;
    bool ending() const {
      return forward.source_gone || forward.sink_gone || backward.source_gone || backward.sink_gone;
    }
  };

  bool any_transition() const {
    for (const Pair& p : pairs_) {
      if (p.closed) continue;
      if (p.forward.has_transition() || p.backward.has_transition()) return true;
    }
    return false;
  }

  void step_all() {
    for (Pair& p : pairs_) {
      if (p.closed) continue;
      try {
        retire(p.forward);
        retire(p.backward);
        post(p.forward, p.ending());
        post(p.backward, p.ending());
      } catch (...) {
        failure_ = std::current_exception();
        return;
      }
      // Once a peer left, what was received from the other is still delivered, then the
      // pair ends: closing both sets abandons the receives still posted and tells the
      // remaining peer.
      if (p.ending() && p.forward.flushed() && p.backward.flushed()) {
        p.forward.from->close();
        p.forward.to->close();
        p.closed = true;
      }
    }
  }

  void retire(Direction& d) {
    if (d.receiving >= 0 && d.from->recv_done()) {
      const int b = d.receiving;
      d.receiving = -1;
      tolerate_departure(d.from, d.source_gone, [&] {
        d.sizes[b] = d.from->finish_recv();
        d.filled.push_back(b);
      });
    }
    if (d.sending >= 0 && d.to->send_done()) {
      const int b = d.sending;
      d.sending = -1;
      tolerate_departure(d.to, d.sink_gone, [&] {
        d.to->finish_send();
        ++totals_.messages;
        totals_.bytes += d.sizes[b];
      });
    }
  }

  void post(Direction& d, bool ending) {
    if (!d.sink_gone && d.sending < 0 && !d.filled.empty()) {
      const int b = d.filled.front();
      d.filled.pop_front();
      tolerate_departure(d.to, d.sink_gone, [&] {
        d.to->start_send({d.buffers[b].get(), d.sizes[b]});
        d.sending = b;
      });
    }
    if (ending || d.receiving >= 0) return;
    const int b = d.free_buffer();
    if (b < 0) return;
    if (!d.buffers[b]) d.buffers[b].reset(new std::byte[max_message_]);
    tolerate_departure(d.from, d.source_gone, [&] {
      d.from->start_recv({d.buffers[b].get(), max_message_}, 0, runtime::ReceiveSize::UpTo);
      d.receiving = b;
    });
  }

  std::uint64_t max_message_;
  std::vector<Pair> pairs_;
  std::vector<StreamSet*> sets_;
  RelayTotals totals_;
  std::exception_ptr failure_;
};

}  // namespace

RelayTotals relay_messages(asio::io_context& io, std::span<const SetPair> pairs,
                           std::uint64_t max_message) {
  if (max_message == 0) throw UsageError("relay: the largest message must be at least 1 byte");
  Relay relay(pairs, max_message);
  return relay.run(io);
}

}  // namespace multilane::wan
