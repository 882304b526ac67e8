// mpi/decision_store.hpp — the process's routes by placement, and the tuning file behind them.
//
// Every communicator keeps its own MeasuredRoutes (its classes' call counts are its own), and
// copies the decisions of its placement from here when it is made: an MPI_Comm_dup or an
// MPI_Comm_split of the same ranks starts decided. Its decisions are published back here; a
// class measured again (measured_route.hpp) replaces its decision when its route changes.
//
// MULTILANE_TUNING=FILE: at MPI_Init rank 0 of MPI_COMM_WORLD reads the file and broadcasts
// its text, so every rank starts from the same routes (the placements whose MPI library,
// multilane version, fingerprint and size match this run: route_tuning.hpp). At MPI_Finalize,
// if this run decided anything the file did not hold, rank 0 writes the file once, atomically
// (a temporary file renamed over it), with its own placements' decisions merged in, and the
// calls made on multilane's routes counted for their re-measurement (measured_route.hpp). A
// placement rank 0 is not part of is not written.
#pragma once

#include <cstdint>
#include <string>

#include "mpi/measured_route.hpp"
#include "mpi/placement_key.hpp"

namespace multilane::mpi {

// Collective over MPI_COMM_WORLD (at start_library()); throws UsageError for a bad file.
void load_decisions(const std::string& path);
// Copies the placement's decisions into `routes`.
// Adds what `routes` counted on multilane's decided routes in this run to the calls of those
// decisions (at a communicator's end), for the file's count.
void count_route_calls(const PlacementKey& placement, const MeasuredRoutes& routes);
void inherit_decisions(const PlacementKey& placement, MeasuredRoutes& routes);
// Records a class's decision, made or measured again in this run, for the communicators of
// the placement made later and for the file.
void publish_decision(const PlacementKey& placement, std::uint64_t key,
                      const ClassDecision& decision);
// On rank 0 of MPI_COMM_WORLD, writes the file if anything new was decided (at stop_library()).
// A failure to write is reported on stderr and does not fail the run.
void save_decisions(const std::string& path);

}  // namespace multilane::mpi
