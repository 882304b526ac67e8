// wan/mpwide/paths.hpp — MPWide's paths (MPW_CreatePath and the calls on one path).
#pragma once

#include <cstdint>
#include <string>

namespace multilane::wan::mpwide {

int create_path(const std::string& host, int base_port, int streams);
// server_wait: may listen when nothing listens at the peer yet (else only connects).
void connect_path(int path_id, bool server_wait);
void destroy_path(int path_id);
// Sends and receives at once on the path; a size of 0 moves nothing that way unless
// `dynamic`, where both messages always travel and the receive takes any size up to
// `recvsize`. Returns the received size.
std::uint64_t path_exchange(int path_id, char* sendbuf, long long sendsize, char* recvbuf,
                            long long recvsize, bool dynamic);

}  // namespace multilane::wan::mpwide
