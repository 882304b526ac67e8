// runtime/transport_error.hpp — the exception every runtime transport throws.
//
// TransportError: a connection could not be made, authenticated or used (bad frame, peer
// closed, timeout). The message names the peer and what was going on, e.g.
// "timed out after 0.2 s waiting for message 3 from 127.0.0.1:4711: received 100 of 1000 bytes".
// A transport object that threw is broken: later calls on it throw again.
#pragma once

#include <stdexcept>

namespace multilane::runtime {

class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace multilane::runtime
