// wan/exchange.hpp — running sends and receives on several stream sets at once, one thread.
//
// Every set involved lives on the same io_context. exchange() posts all operations, drives the
// context until each completed, and fails a set that made no progress for its own timeout
// (StreamSet::expire). A failing set does not stop the others: their operations still run to
// completion or to their timeout, so no buffer is referred to after the call returns; then the
// first failure (in argument order, receives first) is thrown as TransportError.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <span>

#include "runtime/streams/stream_set.hpp"

namespace multilane::wan {

struct SendOp {
  runtime::StreamSet* set = nullptr;
  std::span<const std::byte> data;
};

struct RecvOp {
  runtime::StreamSet* set = nullptr;
  std::span<std::byte> buffer;
  runtime::ReceiveSize size = runtime::ReceiveSize::Exact;
  std::uint64_t received = 0;  // set on success
};

// A set may appear once among the sends and once among the receives (UsageError otherwise).
void exchange(asio::io_context& io, std::span<const SendOp> sends, std::span<RecvOp> receives);

// Drives `io` until `done()`, failing (expire) any of `sets` whose progress() stood still for
// its timeout; returns when done() holds, which must become true once every set failed.
void drive(asio::io_context& io, std::span<runtime::StreamSet* const> sets,
           const std::function<bool()>& done);

}  // namespace multilane::wan
