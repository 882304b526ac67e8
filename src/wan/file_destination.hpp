// wan/file_destination.hpp — where `multilane serve` puts a copied file, and what it refuses.
//
// The requested path is taken relative to the served directory (leading '/' ignored); an empty
// path, one ending in '/', or one naming a directory gets the source file's name appended. A
// path that leaves the directory ("..", or a symbolic link pointing out), whose directory does
// not exist, that names a symbolic link, or an existing file without --force, is refused with a
// sentence saying so (CopyRefused). The partial file of an unfinished copy sits next to the
// destination as "<name>.multilane-part".
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "wan/file_protocol.hpp"

namespace multilane::wan {

class CopyRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Destination {
  std::filesystem::path final_path;
  std::filesystem::path part_path;
  std::string shown;  // relative to the served directory, for messages
};

inline constexpr const char* kPartSuffix = ".multilane-part";

Destination resolve_destination(const std::filesystem::path& root, const CopyRequest& request);

}  // namespace multilane::wan
