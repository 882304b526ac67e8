// wan/splice.hpp — two connected sockets joined: every byte read from one is written to the
// other, in both directions, by asynchronous operations on one event loop.
//
// When one side ends its sending (EOF), the other side's sending is shut down in turn (so an
// orderly end travels through); once both directions ended, or on any error, both sockets are
// closed and `ended` is called once with the bytes moved each way. The bytes are also added to
// the given counters as they move (for a daemon's statistics). TCP keepalive is switched on,
// so a peer that vanished without a word is noticed within minutes, not hours.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace multilane::wan {

struct SpliceTotals {
  std::uint64_t forward = 0;   // first -> second
  std::uint64_t backward = 0;  // second -> first
  bool clean = true;           // both directions ended by EOF (no error, not closed by us)
};

class Splice : public std::enable_shared_from_this<Splice> {
 public:
  using Ended = std::function<void(const SpliceTotals&)>;
  Splice(asio::ip::tcp::socket first, asio::ip::tcp::socket second, std::size_t buffer_size,
         std::atomic<std::uint64_t>& forward_counter, std::atomic<std::uint64_t>& backward_counter,
         Ended ended);
  void start();
  void close();  // ends it now (not clean)

 private:
  struct Half {
    asio::ip::tcp::socket* from = nullptr;
    asio::ip::tcp::socket* to = nullptr;
    std::vector<std::byte> buffer;
    std::atomic<std::uint64_t>* counter = nullptr;
    std::uint64_t bytes = 0;
    bool done = false;
  };
  void pump(Half& half);
  void half_ended(Half& half, const asio::error_code& error);
  void finish(bool clean);

  asio::ip::tcp::socket first_;
  asio::ip::tcp::socket second_;
  Half forward_;
  Half backward_;
  Ended ended_;
  bool finished_ = false;
};

}  // namespace multilane::wan
