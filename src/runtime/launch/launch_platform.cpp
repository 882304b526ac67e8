// runtime/launch/launch_platform.cpp — placing a job's ranks on a platform file (see the header).
#include "runtime/launch/launch_platform.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"

namespace multilane::runtime {

Platform platform_for_job(const std::string& platform_file, int ranks) {
  Platform platform = load_platform_file(platform_file);
  if (platform.num_ranks() == ranks) return platform;
  try {
    platform.place_block(ranks);
  } catch (const std::invalid_argument& e) {
    throw PlatformError(fmt::format("{}: {}", platform_file, e.what()));
  }
  return platform;
}

}  // namespace multilane::runtime
