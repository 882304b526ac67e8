// wan/router_grid.hpp — the routers of several sites on threads of this process.
//
// For tests, benchmarks and demonstrations on one machine: `sites` sites of `routers` routers
// each, all listening on `address` (any port), router i of every site linked with router i of
// the others, each router running its event loop on a thread of its own. Higher sites are built
// first, so that every dialing router knows its peers' ports. The destructor stops and joins
// them all. Their log lines are collected (log()).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "wan/router.hpp"

namespace multilane::wan {

struct RouterGridOptions {
  int sites = 2;
  int routers = 4;
  std::string address = "127.0.0.1";
  std::uint64_t job_id = 0;
  runtime::JobSecret secret;
  std::chrono::milliseconds timeout{10'000};
  std::uint64_t wan_pacing = 0;  // bytes/s of every router's links to other sites
  int wan_buffer = 0;
  // Forwarding delay of router `index` of `site` (tests: chunks of one router arrive last).
  std::function<std::chrono::milliseconds(int site, int index)> delay;
};

class RouterGrid {
 public:
  explicit RouterGrid(const RouterGridOptions& options);
  ~RouterGrid();
  RouterGrid(const RouterGrid&) = delete;
  RouterGrid& operator=(const RouterGrid&) = delete;

  Router& router(int site, int index);
  // The addresses ranks of `site` link to, router 0 first.
  std::vector<asio::ip::tcp::endpoint> endpoints(int site) const;
  std::string log() const;

 private:
  std::vector<std::vector<std::unique_ptr<Router>>> routers_;  // [site][index]
  std::vector<std::vector<asio::ip::tcp::endpoint>> endpoints_;
  std::vector<std::thread> threads_;
  mutable std::mutex mutex_;
  std::string log_;
};

}  // namespace multilane::wan
