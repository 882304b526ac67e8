// wan/file_destination.cpp — destination paths of copies (see file_destination.hpp).
#include "wan/file_destination.hpp"

#include <fmt/format.h>

namespace multilane::wan {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

Destination resolve_destination(const fs::path& root, const CopyRequest& request) {
  const std::string& name = request.name;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    throw CopyRefused(fmt::format("\"{}\" is not a file name", name));
  }
  std::string relative = request.path;
  while (relative.starts_with('/')) relative.erase(0, 1);
  if (relative.empty() || relative.ends_with('/')) relative += name;
  const fs::path normal = fs::path(relative).lexically_normal();
  if (normal.empty() || *normal.begin() == ".." || normal.is_absolute()) {
    throw CopyRefused(fmt::format("{} leaves the served directory", request.path));
  }
  fs::path target = root / normal;
  std::error_code ec;
  if (fs::is_directory(target, ec) && !fs::is_symlink(target, ec)) target /= name;
  const fs::path parent = target.parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw CopyRefused(fmt::format("directory {} does not exist on the server",
                                  fs::relative(parent, root, ec).string()));
  }
  const fs::path real_parent = fs::canonical(parent, ec);
  bool unresolved = static_cast<bool>(ec);
  const fs::path real_root = fs::canonical(root, ec);
  unresolved = unresolved || static_cast<bool>(ec);
  if (unresolved || !inside(real_parent, real_root)) {
    throw CopyRefused(
        fmt::format("{} leaves the served directory (through a symbolic link)", request.path));
  }
  const std::string shown = fs::relative(target, root, ec).string();
  const auto status = fs::symlink_status(target, ec);
  if (fs::is_symlink(status)) throw CopyRefused(fmt::format("{} is a symbolic link", shown));
  if (fs::exists(status)) {
    if (!fs::is_regular_file(status)) {
      throw CopyRefused(fmt::format("{} exists and is not a regular file", shown));
    }
    if (!request.force) {
      throw CopyRefused(
          fmt::format("{} exists on the server (use --force to overwrite it)", shown));
    }
  }
  return {target, fs::path(target.string() + kPartSuffix), shown};
}

}  // namespace multilane::wan
