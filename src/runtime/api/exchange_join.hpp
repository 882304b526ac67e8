// runtime/api/exchange_join.hpp — a Communicator over ranks that already have a way to exchange
// bytes (an MPI communicator, for the PMPI library): no rendezvous store, no launcher variables.
//
// The caller knows its rank and the size, has agreed with the others on a job id and a secret,
// and places the ranks on a platform. `all_gather` is the one exchange: every rank calls it
// once, at the same point, with its text and gets back every rank's text in rank order.
// join_by_exchange() listens, all-gathers the lane addresses through it and then connects like
// from_environment() does (the same engine and handshake). Transport settings come from the
// MULTILANE_* variables as in from_environment() (STREAMS_LAN, MAX_CHUNK, TIMEOUT, ...); the
// launcher contract's variables (RANK, SIZE, SECRET, RENDEZVOUS, JOB_ID, PLATFORM, EXPLAIN) are
// ignored.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "multilane/communicator.hpp"
#include "runtime/tcp/auth.hpp"

namespace multilane::runtime {

struct ExchangeJob {
  int rank = 0;
  int size = 1;
  std::uint64_t job_id = 0;
  JobSecret secret;
  Platform platform;  // places exactly `size` ranks
  std::string host;   // listening address of lanes the platform gives none ("" = loopback)
  std::function<std::vector<std::string>(const std::string&)> all_gather;
};

Communicator join_by_exchange(ExchangeJob job, CommunicatorOptions options = {});

}  // namespace multilane::runtime
