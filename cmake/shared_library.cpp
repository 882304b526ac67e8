// cmake/shared_library.cpp — libmultilane.so is the runtime and core archives, whole; a shared
// library target needs one source of its own.
namespace multilane {
extern const char kSharedLibrary[] = "multilane";
}
