// wan/router_grid.cpp — routers of several sites in one process (see router_grid.hpp).
#include "wan/router_grid.hpp"

namespace multilane::wan {

RouterGrid::RouterGrid(const RouterGridOptions& options)
    : routers_(static_cast<std::size_t>(options.sites)),
      endpoints_(static_cast<std::size_t>(options.sites)) {
  const auto address = asio::ip::make_address(options.address);
  for (int site = options.sites - 1; site >= 0; --site) {
    for (int i = 0; i < options.routers; ++i) {
      RouterOptions o;
      o.site = static_cast<std::uint16_t>(site);
      o.index = static_cast<std::uint32_t>(i);
      o.listen = {address, 0};
      o.job_id = options.job_id;
      o.secret = options.secret;
      o.timeout = options.timeout;
      o.wan_pacing = options.wan_pacing;
      o.wan_buffer = options.wan_buffer;
      if (options.delay) o.forward_delay = options.delay(site, i);
      for (int other = 0; other < options.sites; ++other) {
        if (other == site) continue;
        // Lower sites are only accepted from: their address is not needed.
        o.peers[static_cast<std::uint16_t>(other)] =
            other > site ? endpoints_[static_cast<std::size_t>(other)][static_cast<std::size_t>(i)]
                         : asio::ip::tcp::endpoint(address, 0);
      }
      auto router = std::make_unique<Router>(o, [this](const std::string& line) {
        std::lock_guard lock(mutex_);
        log_ += line + "\n";
      });
      endpoints_[static_cast<std::size_t>(site)].emplace_back(address, router->port());
      routers_[static_cast<std::size_t>(site)].push_back(std::move(router));
    }
  }
  for (auto& site : routers_) {
    for (auto& router : site) threads_.emplace_back([r = router.get()] { r->run(); });
  }
}

RouterGrid::~RouterGrid() {
  for (auto& site : routers_) {
    for (auto& router : site) router->stop();
  }
  for (auto& thread : threads_) thread.join();
}

Router& RouterGrid::router(int site, int index) {
  return *routers_[static_cast<std::size_t>(site)][static_cast<std::size_t>(index)];
}

std::vector<asio::ip::tcp::endpoint> RouterGrid::endpoints(int site) const {
  return endpoints_[static_cast<std::size_t>(site)];
}

std::string RouterGrid::log() const {
  std::lock_guard lock(mutex_);
  return log_;
}

}  // namespace multilane::wan
