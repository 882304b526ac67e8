// tools/tuning_option.cpp — see tuning_option.hpp.
#include "tuning_option.hpp"

#include <filesystem>

#include "runtime/shm/tuning_file.hpp"

namespace multilane::cli {

std::pair<std::string, std::string> tuning_environment(const std::string& file) {
  runtime::shm::read_tuning_file(file);
  return {runtime::shm::kTuningEnvironment, std::filesystem::absolute(file).string()};
}

}  // namespace multilane::cli
