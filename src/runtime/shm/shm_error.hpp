// runtime/shm/shm_error.hpp — the exception the shared-memory layer throws.
//
// ShmError is a TransportError (runtime/tcp/transport_error.hpp), so an executor that handles
// the TCP transport's failures handles these too. The message starts with the group and the rank
// that saw the failure and names the cause, e.g.
//   "shm group job 2a node 0, local rank 1: local rank 2 (pid 4711) died while this rank
//    waited for it to read pipeline buffer 1 (stage 17, call 3: bcast of 100 B, root 0)".
// A group whose operation threw is broken: every rank fails its next wait, and later calls on
// the ShmGroup throw again.
#pragma once

#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime::shm {

class ShmError : public TransportError {
 public:
  using TransportError::TransportError;
};

}  // namespace multilane::runtime::shm
