// wan/path_options.cpp — PathOptions to runtime::StreamOptions (see path_options.hpp).
#include "wan/path_options.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "multilane/errors.hpp"
#include "runtime/tcp/chunk_feed.hpp"

namespace multilane::wan {

namespace {

constexpr int kMaxStreams = 1024;

}  // namespace

void check_path_options(const channels::PathOptions& o) {
  if (o.streams < 1 || o.streams > kMaxStreams) {
    throw UsageError(fmt::format("streams must be 1..{}, got {}", kMaxStreams, o.streams));
  }
  if (o.send_buffer < 0 || o.receive_buffer < 0) {
    throw UsageError(fmt::format("socket buffer sizes must not be negative, got {} and {}",
                                 o.send_buffer, o.receive_buffer));
  }
  if (o.chunk_size < 1) throw UsageError("chunk_size must be at least 1 byte");
  if (o.timeout.count() <= 0) throw UsageError("timeout must be positive");
  if (o.max_message < 1) throw UsageError("max_message must be at least 1 byte");
}

runtime::StreamOptions stream_options(const channels::PathOptions& o,
                                      const channels::Credentials& credentials,
                                      const runtime::JobSecret& key) {
  runtime::StreamOptions options;
  options.job_id = credentials.job_id;
  options.secret = key;
  options.streams = o.streams;
  options.stripe = {o.stripe_threshold, o.chunk_size};
  options.send_buffer = o.send_buffer;
  options.receive_buffer = o.receive_buffer;
  options.pacing_rate = o.pacing_rate;
  options.unsent_limit = runtime::shared_unsent_limit(o.streams);
  options.timeout = o.timeout;
  options.max_message = o.max_message;
  options.resend_stalled = o.resend_stalled;
  options.equal_shares = o.equal_shares;
  options.adapt_streams = o.adapt_streams;
  return options;
}

}  // namespace multilane::wan
