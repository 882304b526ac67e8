// tools/exec_command.hpp — replace this process with a command (searched on PATH), flushing
// stdout first so that nothing printed before is lost.
#pragma once

#include <string>
#include <vector>

namespace multilane::cli {

// Does not return; throws UsageError naming the program when it cannot be run.
[[noreturn]] void exec_command(std::vector<std::string> argv);

}  // namespace multilane::cli
