// wan/stream_tag.cpp — fresh session numbers (see stream_tag.hpp).
#include "wan/stream_tag.hpp"

#include <sodium.h>

namespace multilane::wan {

std::uint32_t new_session() {
  if (sodium_init() < 0) return 0;  // cannot happen once the handshake code ran; 0 still works
  return randombytes_random();
}

}  // namespace multilane::wan
