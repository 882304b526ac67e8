#include "emu/delay_line/tap.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "emu/netns.hpp"
#include "multilane/emu.hpp"

namespace multilane::emu {

int attach_tap(const std::string& netns, const std::string& ifname) {
  NetnsScope inside(netns);  // the TAP is looked up in the namespace /dev/net/tun is opened in
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw EmuError(fmt::format("/dev/net/tun: {}", std::strerror(errno)));
  ifreq request{};
  request.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::strncpy(request.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &request) != 0) {
    const int e = errno;
    close(fd);
    throw EmuError(
        fmt::format("cannot attach to TAP {} in {}: {}", ifname, netns, std::strerror(e)));
  }
  return fd;
}

}  // namespace multilane::emu
