// runtime/tcp/io_wait.cpp — deadline-bounded waits (see io_wait.hpp).
#include "runtime/tcp/io_wait.hpp"

#include "runtime/tcp/transport_error.hpp"

#include <fmt/format.h>

namespace multilane::runtime {

bool run_until(asio::io_context& io, Clock::time_point deadline,
               const std::function<bool()>& done) {
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    io.restart();  // a context that ran out of work stays stopped until restarted
    io.run_one_until(deadline);
  }
  return true;
}

void drain(asio::io_context& io, const std::function<bool()>& done) {
  while (!done()) {
    io.restart();
    if (io.run_one() == 0) return;  // no handler is left that could make `done` true
  }
}

namespace {

// Runs one started operation to its end; `finished` is set by its handler.
IoResult wait_for(asio::io_context& io, asio::ip::tcp::socket& socket, Clock::time_point deadline,
                  bool& finished, const asio::error_code& error, const std::size_t& bytes) {
  if (!run_until(io, deadline, [&] { return finished; })) {
    asio::error_code ignored;
    socket.close(ignored);
    drain(io, [&] { return finished; });
    return {IoOutcome::Timeout, {}, bytes};
  }
  if (!error) return {IoOutcome::Done, {}, bytes};
  if (is_peer_gone(error)) return {IoOutcome::Closed, error, bytes};
  return {IoOutcome::Failed, error, bytes};
}

}  // namespace

IoResult read_exact(asio::io_context& io, asio::ip::tcp::socket& socket, std::span<std::byte> bytes,
                    Clock::time_point deadline) {
  bool finished = false;
  asio::error_code error;
  std::size_t done_bytes = 0;
  asio::async_read(socket, asio::buffer(bytes.data(), bytes.size()),
                   [&](const asio::error_code& ec, std::size_t n) {
                     error = ec;
                     done_bytes = n;
                     finished = true;
                   });
  return wait_for(io, socket, deadline, finished, error, done_bytes);
}

IoResult write_all(asio::io_context& io, asio::ip::tcp::socket& socket,
                   std::span<const std::byte> bytes, Clock::time_point deadline) {
  bool finished = false;
  asio::error_code error;
  std::size_t done_bytes = 0;
  asio::async_write(socket, asio::buffer(bytes.data(), bytes.size()),
                    [&](const asio::error_code& ec, std::size_t n) {
                      error = ec;
                      done_bytes = n;
                      finished = true;
                    });
  return wait_for(io, socket, deadline, finished, error, done_bytes);
}

bool is_peer_gone(const asio::error_code& error) {
  return kind_of(error) == ErrorKind::peer_gone;
}

std::string peer_name(const asio::ip::tcp::socket& socket) {
  asio::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

std::string seconds_text(std::chrono::milliseconds duration) {
  return fmt::format("{:g} s", static_cast<double>(duration.count()) / 1000.0);
}

}  // namespace multilane::runtime
