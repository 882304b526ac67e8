// wan/tool_credentials.hpp — the job credentials of the WAN commands (relay, router, serve, cp).
//
// A secret never goes on a command line (other users can read those). It comes from a file
// (--secret-file: its first line) or else from MULTILANE_SECRET; the job id from --job or else
// MULTILANE_JOB_ID (default 0). Throws UsageError naming the option or variable at fault.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "multilane/channels.hpp"

namespace multilane::wan {

// MULTILANE_JOB_ID, 0 when unset.
std::uint64_t job_id_from_environment();

channels::Credentials tool_credentials(const std::string& secret_file,
                                       std::optional<std::uint64_t> job_id);

}  // namespace multilane::wan
