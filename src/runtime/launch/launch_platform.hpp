// runtime/launch/launch_platform.hpp — the platform a job of N ranks runs on.
//
// The rule, shared by the launcher (which checks before starting anything) and the ranks
// (which place themselves): the file's own placement when it places exactly N ranks, else N
// ranks placed block-wise (every core of a node, nodes in file order). A platform with fewer
// than N cores cannot hold the job: PlatformError "FILE: cannot place 40 ranks on 32 cores".
// Errors of the file itself are the platform reader's (`FILE:LINE: key: reason`).
#pragma once

#include <string>

#include "multilane/platform.hpp"

namespace multilane::runtime {

Platform platform_for_job(const std::string& platform_file, int ranks);

}  // namespace multilane::runtime
