// tests/fuzz/targets/platform_toml.cpp — the platform reader (multilane/platform_file.hpp) on
// any text: it gives a platform or a PlatformError that names the source ("fuzz.toml:LINE:
// key: reason"), never anything else; and a platform it gives is written to a text that it
// reads back, which writes to the same text again.
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"

using namespace multilane;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Platform platform;
  try {
    platform = parse_platform(text, "fuzz.toml");
  } catch (const PlatformError& error) {
    FUZZ_CHECK(std::string_view(error.what()).rfind("fuzz.toml", 0) == 0,
               "a refused platform names its source");
    return 0;
  }
  const std::string written = platform_to_toml(platform);
  Platform again;
  try {
    again = parse_platform(written, "written.toml");
  } catch (const PlatformError& error) {
    std::fprintf(stderr, "%s\n", error.what());
    FUZZ_CHECK(false, "a platform's own text reads back");
  }
  FUZZ_CHECK(platform_to_toml(again) == written, "a platform's text is written again the same");
  return 0;
}
