// runtime/tcp/transport_error.cpp — socket errors to kinds (transport_error.hpp).
#include "runtime/tcp/transport_error.hpp"

#include <asio/error.hpp>

namespace multilane::runtime {

ErrorKind kind_of(const std::error_code& error) {
  if (error == asio::error::eof) return ErrorKind::peer_gone;
  if (error == asio::error::timed_out) return ErrorKind::timeout;
  if (error == asio::error::no_memory || error == asio::error::no_buffer_space ||
      error == asio::error::no_descriptors || error == asio::error::address_in_use) {
    return ErrorKind::resource;
  }
  if (error == asio::error::connection_reset || error == asio::error::broken_pipe ||
      error == asio::error::connection_aborted || error == asio::error::connection_refused ||
      error == asio::error::not_connected || error == asio::error::host_unreachable ||
      error == asio::error::network_unreachable || error == asio::error::network_down ||
      error == asio::error::network_reset || error == asio::error::shut_down) {
    return ErrorKind::peer_gone;
  }
  return ErrorKind::internal;
}

}  // namespace multilane::runtime
