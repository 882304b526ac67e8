// tools/plot.hpp — drawing time against size per algorithm with scripts/plot.py (matplotlib of
// Debian's /usr/bin/python3).
#pragma once

#include <string>

namespace multilane::cli {

// `json_text` holds {"results": [{"algorithm", "size", "time_s"}, ...]}; writes a log-log PNG.
void run_plot(const std::string& json_text, const std::string& png, const std::string& title);

}  // namespace multilane::cli
