// wan/path_options.hpp — a path's options (channels.hpp) as the stream set's options.
//
// Every user of the WAN paths (Channels, the MPWide drop-in's paths) turns PathOptions into
// runtime::StreamOptions here, so a path behaves the same whichever API opened it.
#pragma once

#include "multilane/channels.hpp"
#include "runtime/streams/stream_set.hpp"

namespace multilane::wan {

// Throws UsageError naming the option out of range.
void check_path_options(const channels::PathOptions& options);

runtime::StreamOptions stream_options(const channels::PathOptions& options,
                                      const channels::Credentials& credentials,
                                      const runtime::JobSecret& key);

}  // namespace multilane::wan
