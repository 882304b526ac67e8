// tools/emu_mpirun.hpp — Open MPI's mpirun across the nodes of an emulated grid, so that an MPI
// program (Open MPI's own collectives, the PMPI library, the platform probe) runs on exactly the
// grid that multilane and iperf3 use.
//
// mpirun runs inside node 0's namespace with the grid's hostfile (lane-0 addresses, one slot
// per core). It starts its daemon on every other node through an rsh agent that is this binary
// again (`multilane emu agent`, hidden), which enters the namespace of the node owning the
// address mpirun names. Every emulated node has this machine's host name and /tmp, so each
// node's daemon gets a session directory of its own (the agent rewrites the one mpirun passes
// on the daemon's command line: daemons sharing one raced, "mkdir /tmp/ompi.HOST.0/jf.N: File
// exists"), all under one temporary directory removed at the end.
// MPI traffic uses TCP over the lanes (198.18.0.0/15) only; ranks are not bound to cores.
// orted's hwloc run-time control, which shares the topology through a fixed-address mapping,
// crashed now and then with several daemons on one machine: it is off.
#pragma once

#include <string>
#include <vector>

namespace multilane::cli {

struct EmuMpirun {
  std::string name;                         // the grid (`multilane emu up --name`)
  int ranks = 0;                            // 0: one per core of the grid
  std::vector<std::string> mpirun_options;  // passed to mpirun before the program
  std::vector<std::string> command;         // the program and its arguments
};

// Runs mpirun and returns its exit status. Throws EmuError / UsageError.
int run_emu_mpirun(const EmuMpirun& run);
// The rsh agent: runs `words` (joined and handed to sh -c, as ssh does) in the namespace of the
// node owning `host`, with that node's Open MPI session directory under `session`. Does not
// return unless it fails (throws).
[[noreturn]] void run_emu_agent(const std::string& name, const std::string& session,
                                const std::string& host, const std::vector<std::string>& words);

}  // namespace multilane::cli
