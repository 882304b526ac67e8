// runtime/tcp/io_wait.hpp — blocking waits with deadlines on top of asio's asynchronous
// operations.
//
// The transports are blocking (call, wait, return) but every wait must end by a deadline, which
// plain blocking socket calls cannot promise. So operations are started asynchronously and the
// caller's thread runs the io_context until they completed or the deadline passed. One
// io_context is driven by one thread at a time; nothing here is thread-safe.
//
// After a timeout the sockets involved must be closed and drain() run, so that handlers that
// reference the caller's stack have run before it unwinds.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <string>

namespace multilane::runtime {

using Clock = std::chrono::steady_clock;

// Runs `io` until `done()` holds (true) or `deadline` passes (false).
bool run_until(asio::io_context& io, Clock::time_point deadline, const std::function<bool()>& done);
// Runs `io` until `done()` holds, however long: for handlers of operations already cancelled.
// Returns early when no handler is pending at all (none could change `done` any more) rather
// than spin.
void drain(asio::io_context& io, const std::function<bool()>& done);

enum class IoOutcome { Done, Timeout, Closed, Failed };
struct IoResult {
  IoOutcome outcome = IoOutcome::Done;
  asio::error_code error;  // for Failed
  std::size_t bytes = 0;   // transferred before the outcome
};

// Reads exactly / writes all of `bytes`; on Timeout the socket is closed.
IoResult read_exact(asio::io_context& io, asio::ip::tcp::socket& socket, std::span<std::byte> bytes,
                    Clock::time_point deadline);
IoResult write_all(asio::io_context& io, asio::ip::tcp::socket& socket,
                   std::span<const std::byte> bytes, Clock::time_point deadline);

// True for the error codes that mean "the peer went away" rather than a local failure.
bool is_peer_gone(const asio::error_code& error);
// "127.0.0.1:4711" of a connected socket's remote end ("unknown peer" if it has none).
std::string peer_name(const asio::ip::tcp::socket& socket);
// A duration as people write it in messages: "0.2 s", "60 s".
std::string seconds_text(std::chrono::milliseconds duration);

}  // namespace multilane::runtime
