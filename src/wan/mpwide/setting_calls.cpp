// wan/mpwide/setting_calls.cpp — MPWide's settings, look-ups and process-wide calls: windows,
// chunk sizes, pacing, autotuning, DNS, splitting a buffer, listing, finalizing.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "multilane/errors.hpp"
#include "multilane/mpwide/MPWide.h"
#include "wan/mpwide/reach.hpp"
#include "wan/mpwide/registry.hpp"

using multilane::wan::mpwide::reported;
namespace mpw = multilane::wan::mpwide;

namespace {

// A void setter that refuses its argument reports it and changes nothing.
template <typename Fn>
void setting(const char* call, Fn fn) {
  reported(
      call,
      [&] {
        fn();
        return 0;
      },
      -1);
}

void check_window(int size) {
  if (size < 0) {
    throw multilane::UsageError(fmt::format("the window must be >= 0 bytes, got {}", size));
  }
}

}  // namespace

char* MPW_DNSResolve(char* host) {
  thread_local std::string text;
  if (host == nullptr) return nullptr;
  const auto address = mpw::ipv4_address(host);
  if (!address) {
    std::fprintf(stderr, "MPW_DNSResolve: cannot resolve host \"%s\"\n", host);
    return nullptr;
  }
  text = *address;
  return text.data();
}

char* MPW_DNSResolve(std::string host) {
  return MPW_DNSResolve(host.data());
}

void MPW_setAutoTuning(bool b) {
  std::lock_guard lock(mpw::state().mutex);
  mpw::state().tunables.autotuning = b;
}

bool MPW_AutoTuning() {
  std::lock_guard lock(mpw::state().mutex);
  return mpw::state().tunables.autotuning;
}

void MPW_Print() {
  std::lock_guard lock(mpw::state().mutex);
  const auto& slots = mpw::state().slots;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].kind == mpw::SlotKind::Free) continue;
    std::fprintf(stderr, "MPWide connection stream #: %zu\n", i);
    std::fprintf(stderr, "MPWide base connection port:%d\n", slots[i].port);
    std::fprintf(stderr, "MPWide remote_url:%s\n", slots[i].host.c_str());
  }
  std::fflush(stderr);
}

int MPW_NumChannels() {
  std::lock_guard lock(mpw::state().mutex);
  return static_cast<int>(mpw::state().slots.size());
}

void MPW_setWin(int channel, int size) {
  setting("MPW_setWin", [&] {
    check_window(size);
    const mpw::Target target = mpw::owner_of(channel);
    std::lock_guard lock(mpw::state().mutex);
    if (target.path) target.path->window = size;
  });
}

void MPW_setPathWin(int path, int size) {
  setting("MPW_setPathWin", [&] {
    check_window(size);
    const auto p = mpw::path_of(path);
    std::lock_guard lock(mpw::state().mutex);
    p->window = size;
  });
}

int MPW_Finalize() {
  mpw::State& s = mpw::state();
  std::vector<std::shared_ptr<mpw::Path>> paths;  // closed outside the lock
  std::vector<mpw::Slot> slots;                   // holding the MPW_Init channels
  {
    std::lock_guard lock(s.mutex);
    paths.swap(s.paths);
    slots.swap(s.slots);
  }
  // Closed at once: a path's receiving end lingers until its peer closes too, and both ends
  // may be paths of this process.
  std::vector<std::thread> closing;
  for (auto& path : paths) {
    if (!path) continue;
    std::shared_ptr<multilane::wan::DuplexPath> link;
    {
      std::lock_guard lock(s.mutex);
      link = std::move(path->link);
    }
    if (link) closing.emplace_back([link = std::move(link)]() mutable { link.reset(); });
  }
  for (auto& t : closing) t.join();
  return 1;
}

void MPW_splitBuf(char* buf, long long int bsize, int num_chunks, char** split_buf,
                  long long int* chunk_sizes) {
  setting("MPW_splitBuf", [&] {
    if (num_chunks < 1) {
      throw multilane::UsageError(fmt::format("needs at least one chunk, got {}", num_chunks));
    }
    if (bsize < 0) {
      throw multilane::UsageError(fmt::format("the size must not be negative, got {}", bsize));
    }
    if (split_buf == nullptr || chunk_sizes == nullptr) {
      throw multilane::UsageError("split_buf or chunk_sizes is NULL");
    }
    long long offset = 0;
    for (int i = 0; i < num_chunks; ++i) {
      const long long size = bsize / num_chunks + (i < bsize % num_chunks ? 1 : 0);
      split_buf[i] = buf + offset;
      chunk_sizes[i] = size;
      offset += size;
    }
  });
}

void MPW_setChunkSize(int sending, int receiving) {
  setting("MPW_setChunkSize", [&] {
    if (sending < 1 || receiving < 1) {
      throw multilane::UsageError(
          fmt::format("chunk sizes must be >= 1 byte, got {} and {}", sending, receiving));
    }
    std::lock_guard lock(mpw::state().mutex);
    mpw::state().tunables.chunk_send = sending;
    mpw::state().tunables.chunk_recv = receiving;
  });
}

extern "C" {

double MPW_getPacingRate() {
  std::lock_guard lock(mpw::state().mutex);
  return mpw::state().tunables.pacing_rate;
}

void MPW_setPacingRate(double rate) {
  setting("MPW_setPacingRate", [&] {
    if (!(rate >= 0)) {
      throw multilane::UsageError(fmt::format("the pacing rate must be >= 0, got {}", rate));
    }
    std::lock_guard lock(mpw::state().mutex);
    mpw::state().tunables.pacing_rate = rate;
  });
}

const char* MPW_LastError(void) {
  return mpw::last_error().c_str();
}

int MPW_setTimeout(double seconds) {
  return reported(
      "MPW_setTimeout",
      [&] {
        if (!(seconds > 0)) {
          throw multilane::UsageError(fmt::format("the timeout must be > 0 s, got {}", seconds));
        }
        std::lock_guard lock(mpw::state().mutex);
        mpw::state().tunables.timeout =
            std::max(std::chrono::milliseconds{1},
                     std::chrono::milliseconds{static_cast<long long>(seconds * 1000)});
        return 0;
      },
      -1);
}

}  // extern "C"
