// tools/emu_job.hpp — running a job's ranks on an emulated grid (`multilane launch --emu NAME`,
// `multilane bench --emu NAME`).
//
// An EmulatedJob prepares a LaunchSpec so that:
//   - each rank runs inside the network namespace of the node the platform places it on
//     (the launcher's rule, runtime/launch/launch_platform.hpp: the file's placement when it places
//     exactly N ranks, else block-wise), through `ip netns exec NETNS env
//     MULTILANE_LANE_ADDRESSES=<node's lanes> MULTILANE_HOST=<lane 0> PROGRAM ...`, so every
//     stream binds to the lane the schedule asked for;
//   - the platform is the grid's own (/run/multilane/NAME/platform.toml) unless the spec names
//     one, which must then have the grid's nodes and lanes;
//   - the rendezvous store is served on lane 0 of the node of rank 0, which every namespace
//     reaches (over the site's bridge, or the WAN delay line).
// To serve the store there, the calling thread enters that node's namespace for the lifetime of
// the EmulatedJob: call runtime::launch_job(spec) while it lives, and nothing else that needs
// the host's network.
//
// Errors (thrown before anything starts): EmuError when this process cannot run the emulator
// (not root) or the grid is not up (`--emu grid: emulation "grid" is not up; start it with
// multilane emu up PLATFORM --name grid`); UsageError when the grid cannot hold N ranks
// (`-n 9 is more than emulation "grid" holds: 8 ranks (8 nodes, 8 cores)`) or the platform
// does not match the grid.
#pragma once

#include <memory>
#include <string>

#include "emu/netns.hpp"
#include "runtime/launch/launcher.hpp"

namespace multilane::cli {

class EmulatedJob {
 public:
  EmulatedJob(const std::string& name, runtime::LaunchSpec& spec);

 private:
  std::unique_ptr<emu::NetnsScope> inside_rendezvous_node_;
};

}  // namespace multilane::cli
