// tools/exec_command.hpp — this program's own path, and replacing this process with a command
// (searched on PATH), flushing stdout first so that nothing printed before is lost.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace multilane::cli {

// The running `multilane` binary (/proc/self/exe): what it starts again (the emulated grid's
// mpirun agent, bench's ranks) and what it finds next to it (the probe, scripts/).
std::filesystem::path this_program();

// Does not return; throws UsageError naming the program when it cannot be run.
[[noreturn]] void exec_command(std::vector<std::string> argv);

}  // namespace multilane::cli
