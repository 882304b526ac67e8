// runtime/transport/engine_context.hpp — what the parts of the engine share (internal to
// engine*.cpp).
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>
#include <vector>

#include "runtime/tcp/polled_readers.hpp"
#include "runtime/tcp/worker_threads.hpp"
#include "runtime/transport/engine.hpp"

namespace multilane::runtime {

struct EngineContext {
  explicit EngineContext(EngineConfig engine_config)
      : config(std::move(engine_config)), demand(static_cast<std::size_t>(config.size)) {}
  EngineConfig config;
  asio::io_context io;
  WorkerThreads handshakes;
  // The incoming streams' readers that a spinning blocking caller reads itself.
  PolledReaders polled_readers;
  // Per peer: the receives that wait for its frames (ReceiveSide) and the sends to it
  // (SendSide), which its streams' readers follow.
  std::vector<StreamDemand> demand;
  // Checks a frame's signature against the call of that sequence number running here (or
  // remembers it for when the call begins); false when the frame belongs to another call.
  std::function<bool(int peer, std::uint64_t sequence, std::uint64_t signature)> check_signature;

  // Work of the engine's own that must progress although no operation is in flight (a kept
  // tail waiting for its acknowledgements): the progress thread drives while any is under way,
  // as it does for background operations. Driving thread only.
  std::function<void()> own_work_began = [] {};
  std::function<void()> own_work_ended = [] {};

  // One line on stderr, prefixed with this rank: faults the job survives (rejected strangers).
  void log(const std::string& message) const;
  HandshakeConfig handshake(std::uint64_t identity) const {
    return HandshakeConfig{config.job_id, config.secret, config.timeout, identity};
  }
};

// Where a peer-facing operation stands, for timeout messages.
inline std::string progress_text(std::uint64_t done, std::uint64_t total) {
  return std::to_string(done) + " of " + std::to_string(total) + " bytes";
}

}  // namespace multilane::runtime
