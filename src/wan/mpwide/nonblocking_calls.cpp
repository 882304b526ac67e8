// wan/mpwide/nonblocking_calls.cpp — MPW_ISendRecv, MPW_Has_NBE_Finished, MPW_Wait.
//
// A non-blocking exchange runs the path's MPW_SendRecv on a thread of its own, as MPWide does;
// the path lets it send or receive while other threads use the path's other direction. The
// exchange ends by the path's timeout at the latest, so MPW_Wait is bounded too.
#include <fmt/format.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "multilane/errors.hpp"
#include "multilane/mpwide/MPWide.h"
#include "wan/mpwide/paths.hpp"
#include "wan/mpwide/registry.hpp"

using multilane::wan::mpwide::reported;
namespace mpw = multilane::wan::mpwide;

namespace {

struct Exchange {
  std::thread thread;
  std::atomic<bool> finished{false};
  std::string error;  // written before `finished`
};

struct Exchanges {
  std::mutex mutex;
  std::map<int, std::shared_ptr<Exchange>> running;
  int next_id = 0;
};

Exchanges& exchanges() {
  static Exchanges e;
  return e;
}

std::shared_ptr<Exchange> find(int id) {
  std::lock_guard lock(exchanges().mutex);
  const auto it = exchanges().running.find(id);
  if (it == exchanges().running.end()) {
    throw multilane::UsageError(fmt::format("no non-blocking exchange {} is pending", id));
  }
  return it->second;
}

}  // namespace

int MPW_ISendRecv(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                  int path) {
  return reported(
      "MPW_ISendRecv",
      [&] {
        const auto p = mpw::path_of(path);
        mpw::link_of(*p, path);  // refuses an unconnected path now, not in the thread
        auto exchange = std::make_shared<Exchange>();
        exchange->thread = std::thread([exchange, sendbuf, sendsize, recvbuf, recvsize, path] {
          try {
            mpw::path_exchange(path, sendbuf, sendsize, recvbuf, recvsize, false);
          } catch (const std::exception& e) {
            exchange->error = e.what();
          }
          exchange->finished = true;
        });
        std::lock_guard lock(exchanges().mutex);
        const int id = exchanges().next_id++;
        exchanges().running.emplace(id, std::move(exchange));
        return id;
      },
      -1);
}

bool MPW_Has_NBE_Finished(int NBE_id) {
  return reported(
      "MPW_Has_NBE_Finished", [&] { return find(NBE_id)->finished.load(); }, true);
}

void MPW_Wait(int NBE_id) {
  std::shared_ptr<Exchange> exchange;
  const int found = reported(
      "MPW_Wait",
      [&] {
        exchange = find(NBE_id);
        return 0;
      },
      -1);
  if (found != 0) return;
  exchange->thread.join();
  {
    std::lock_guard lock(exchanges().mutex);
    exchanges().running.erase(NBE_id);
  }
  mpw::or_exit("MPW_Wait", [&] {
    if (!exchange->error.empty()) {
      throw multilane::UsageError(
          fmt::format("non-blocking exchange {}: {}", NBE_id, exchange->error));
    }
  });
}
