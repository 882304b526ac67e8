// runtime/tcp/transport_error.hpp — the exception every runtime transport throws.
//
// TransportError: a connection could not be made, authenticated or used (bad frame, peer
// closed, timeout). The message names the peer and what was going on, e.g.
// "timed out after 0.2 s waiting for message 3 from 127.0.0.1:4711: received 100 of 1000 bytes".
// A transport object that threw is broken: later calls on it throw again.
#pragma once

#include "multilane/errors.hpp"

namespace multilane::runtime {

class TransportError : public CommunicationError {
 public:
  using CommunicationError::CommunicationError;
};

}  // namespace multilane::runtime
