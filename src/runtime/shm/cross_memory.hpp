// runtime/shm/cross_memory.hpp — copies between the address spaces of two processes of one
// node (Linux cross-memory attach: process_vm_readv / process_vm_writev), the kernel copying
// once from one process's pages to the other's, as Open MPI's vader does with CMA.
//
// The kernel allows it when the caller may ptrace the other process: the same user and, with
// Yama's ptrace_scope 1, a process that declared the caller as its tracer. Every rank of a
// group declares any process of the user as its tracer (allow_cross_memory_access()), and
// the group checks at setup that the copies are allowed before it uses them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace multilane::runtime::shm {

// Lets other processes of this user read and write this process's memory (PR_SET_PTRACER;
// a no-op without Yama).
void allow_cross_memory_access();

// How a copy went: `error` is empty, or says why it failed. `process_gone`: the kernel found no
// such process (ESRCH), or one that has given up its memory because it is exiting; /proc may
// still show it alive for a moment then (seen once in a clean `make test` under load).
struct CrossMemoryResult {
  std::string error;
  bool process_gone = false;
  bool ok() const { return error.empty(); }
};

// Copies `length` bytes at `address` in process `pid` to `into`.
CrossMemoryResult read_process_memory(pid_t pid, std::uint64_t address, std::byte* into,
                                      std::uint64_t length);
// Copies `length` bytes from `from` to `address` in process `pid`.
CrossMemoryResult write_process_memory(pid_t pid, std::uint64_t address, const std::byte* from,
                                       std::uint64_t length);

}  // namespace multilane::runtime::shm
