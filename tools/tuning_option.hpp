// tools/tuning_option.hpp — `--tuning FILE` of `launch` and `bench`: the shared-memory tuning
// file (written by `multilane tune shm`) handed to every rank as MULTILANE_TUNING.
#pragma once

#include <string>
#include <utility>

namespace multilane::cli {

// Reads FILE once here, so that a bad file fails before any rank starts (the error names the
// file, line and key), and returns the variable to add to the ranks' environment, with the
// file's absolute path.
std::pair<std::string, std::string> tuning_environment(const std::string& file);

}  // namespace multilane::cli
