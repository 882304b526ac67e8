// runtime/tcp/polled_readers.cpp — see polled_readers.hpp.
#include "runtime/tcp/polled_readers.hpp"

#include <algorithm>

#include "runtime/tcp/frame_reader.hpp"

namespace multilane::runtime {

bool PolledReaders::list(FrameReader& reader) {
  if (!has_room()) return false;
  readers_.push_back(&reader);
  return true;
}

void PolledReaders::forget(const FrameReader& reader) {
  const auto listed = std::find(readers_.begin(), readers_.end(), &reader);
  if (listed != readers_.end()) readers_.erase(listed);
}

void PolledReaders::stop_polling() {
  polling_ = false;
  // Waiting readers never list themselves while polling is off, so the list only shrinks.
  while (!readers_.empty()) {
    FrameReader* reader = readers_.back();
    readers_.pop_back();
    reader->wait_readable();
  }
}

bool PolledReaders::poll() {
  const bool every_reader = ++rounds_ % kEveryReaderRound == 0;
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    if (!every_reader && !readers_[i]->awaited()) continue;
    // What a reader does with its bytes may list it again or forget others: one per call.
    if (readers_[i]->read_polled()) return true;
  }
  return false;
}

}  // namespace multilane::runtime
