// mpi/dispatch.cpp — routing and running one wrapped call (dispatch.hpp).
#include "mpi/dispatch.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "mpi/comm_state.hpp"
#include "mpi/library.hpp"
#include "mpi/mpi_errors.hpp"
#include "mpi/pending_requests.hpp"
#include "mpi/progress_wait.hpp"
#include "mpi/route_policy.hpp"

namespace multilane::mpi {

namespace {

std::uint32_t element_bytes(const CollectiveCall& c) {
  return is_reduction(carrier(c.call)) ? static_cast<std::uint32_t>(element_size(c.reduction.type))
                                       : 1;
}

void explain(const CollectiveCall& c, const CommState& state, const Route& route,
             bool nonblocking) {
  if (!library().settings.explain || c.rank != 0) return;
  std::string choice = "MPI library";
  if (route.multilane) {
    choice =
        fmt::format("multilane {}", state.multilane->resolve_algorithm(
                                        carrier(c.call), c.block, rooted(c.call) ? c.args.root : 0,
                                        {.algorithm = route.algorithm}, element_bytes(c)));
  }
  std::string where = rooted(c.call) ? fmt::format(" root {}", c.args.root) : std::string();
  if (state.layout.sites > 1) where += fmt::format(" ({} sites)", state.layout.sites);
  std::fprintf(stderr, "multilane-mpi: %s %llu B%s, %d ranks on %d node(s): %s (%s)\n",
               call_function(c.call, nonblocking).c_str(), static_cast<unsigned long long>(c.block),
               where.c_str(), c.size, state.layout.nodes, choice.c_str(), route.reason.c_str());
}

// A call describe_call() leaves to the MPI library, explained on rank 0 (of the local group of
// an intercommunicator).
void explain_fallback(WrappedCall call, MPI_Comm comm, bool nonblocking) {
  if (!library().settings.explain || comm == MPI_COMM_NULL) return;
  int rank = -1, inter = 0;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0) return;
  PMPI_Comm_test_inter(comm, &inter);
  const char* why = inter                         ? "intercommunicator"
                    : is_reduction(carrier(call)) ? "a datatype, operation or argument it serves"
                                                  : "arguments for the MPI library to check";
  std::fprintf(stderr, "multilane-mpi: %s: MPI library (%s)\n",
               call_function(call, nonblocking).c_str(), why);
}

// The call on multilane's route, or nullopt for the MPI library's; the state is made here.
struct Routed {
  CollectiveCall call;
  std::shared_ptr<Communicator> multilane;
  CollectiveOptions options;
};

std::optional<Routed> route_call(WrappedCall call, MPI_Comm comm, const MpiArgs& args,
                                 bool nonblocking) {
  if (!library().active) return std::nullopt;
  std::optional<CollectiveCall> described = describe_call(call, comm, args);
  if (!described) {
    explain_fallback(call, comm, nonblocking);
    return std::nullopt;
  }
  CommState& state = state_of(comm);
  const Route route = state.route->choose({.call = call,
                                           .bytes = described->block,
                                           .root = rooted(call) ? described->args.root : 0,
                                           .element_size = element_bytes(*described)});
  Routed routed{std::move(*described), nullptr, {.algorithm = route.algorithm}};
  if (route.multilane) routed.multilane = multilane_of(state);
  explain(routed.call, state, route, nonblocking);
  if (!route.multilane) return std::nullopt;
  return routed;
}

Request start(Routed& routed, CollectiveCall& c) {
  c.prepare();
  return routed.multilane->irun(carrier(c.call), c.send(), c.recv(),
                                rooted(c.call) ? c.args.root : 0, c.block, routed.options,
                                c.reduction);
}

}  // namespace

std::optional<int> run_blocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args) {
  try {
    std::optional<Routed> routed = route_call(call, comm, args, false);
    if (!routed) return std::nullopt;
    Request request = start(*routed, routed->call);
    wait_with_progress(request);
    routed->call.finish();
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    return report_failure(comm, call_function(call, false), e.what());
  }
}

std::optional<int> start_nonblocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args,
                                     MPI_Request* request) {
  try {
    std::optional<Routed> routed = route_call(call, comm, args, true);
    if (!routed) return std::nullopt;
    auto pending = std::make_unique<PendingCall>();
    pending->call = std::make_unique<CollectiveCall>(std::move(routed->call));
    pending->function = call_function(call, true);
    pending->request = start(*routed, *pending->call);
    pending->owner = routed->multilane;
    *request = start_pending(std::move(pending));
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    return report_failure(comm, call_function(call, true), e.what());
  }
}

}  // namespace multilane::mpi
