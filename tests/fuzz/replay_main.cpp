// tests/fuzz/replay_main.cpp — runs a fuzz target on every file of its corpus, once, in name
// order: what `make test` does with the fuzz targets (deterministic; `make fuzz-run` fuzzes).
//
//   fuzz_replay_<target> CORPUS_DIR...
//
// Prints how many inputs ran; exits non-zero when a folder is missing or empty, so that a
// corpus that went astray fails the test instead of passing on nothing. A target that finds a
// property broken aborts (fuzz_check.hpp), and so do the sanitizers in the ASan build.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
    return 2;
  }
  std::size_t inputs = 0;
  for (int a = 1; a < argc; ++a) {
    std::vector<std::filesystem::path> files;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(argv[a], error)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    if (error || files.empty()) {
      std::fprintf(stderr, "%s: no corpus files (%s)\n", argv[a],
                   error ? error.message().c_str() : "empty folder");
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      const std::vector<std::uint8_t> bytes = read_file(file);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++inputs;
    }
  }
  std::printf("%zu inputs replayed, none failed\n", inputs);
  return 0;
}
