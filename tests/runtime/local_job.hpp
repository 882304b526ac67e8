// tests/runtime/local_job.hpp — several ranks of one job as threads of the test process.
//
// Each rank is a real Communicator with its own engine and TCP connections over 127.0.0.1;
// only the address exchange is in memory. run_local_job() joins every thread and returns what
// each rank threw ("" when it returned), so a failing rank cannot hang or crash the test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "multilane/communicator.hpp"
#include "runtime/api/communicator_impl.hpp"
#include "runtime/launch/address_book.hpp"

namespace multilane::testing {

class MemoryAddressBook : public runtime::AddressBook {
 public:
  void publish(int rank, const std::vector<std::string>& addresses) override {
    {
      std::lock_guard lock(mutex_);
      book_[rank] = addresses;
    }
    changed_.notify_all();
  }
  void publish_failure(int rank, const runtime::Failure& why) override {
    {
      std::lock_guard lock(mutex_);
      failures_[rank] = why;
    }
    changed_.notify_all();
  }
  std::vector<std::string> lookup(int rank) override {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, std::chrono::seconds(20),
                           [&] { return book_.contains(rank) || failures_.contains(rank); })) {
      throw CommunicationError(ErrorKind::timeout,
                               "rank " + std::to_string(rank) + " never published its address");
    }
    if (failures_.contains(rank))
      runtime::check_not_failure(rank, runtime::failure_value(failures_[rank]));
    return book_[rank];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, std::vector<std::string>> book_;
  std::map<int, runtime::Failure> failures_;
};

struct LocalJob {
  Platform platform;
  CommunicatorOptions options;
  std::string secret = "local job secret";
  // Secret of one rank, to test a rank that does not belong (empty: the job's).
  std::map<int, std::string> secret_of;
};

// `beside`, when given, runs on a thread of its own next to the ranks (e.g. an intruder that
// reads the ranks' addresses from the book).
inline std::vector<std::string> run_local_job(
    const LocalJob& job, const std::function<void(Communicator&)>& body,
    const std::function<void(MemoryAddressBook&)>& beside = {}) {
  const int size = job.platform.num_ranks();
  MemoryAddressBook book;
  std::thread beside_thread;
  if (beside) beside_thread = std::thread([&] { beside(book); });
  std::vector<std::string> errors(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        CommunicatorSetup setup;
        setup.rank = rank;
        setup.size = size;
        // One job id per test process: ctest runs tests in parallel, and two processes'
        // shared-memory groups with one job id claim the same segment ("job id reused?").
        setup.job_id = 0x7000'0000'0000'0000ull | static_cast<std::uint64_t>(::getpid());
        const auto secret = job.secret_of.contains(rank) ? job.secret_of.at(rank) : job.secret;
        setup.secret = runtime::JobSecret::from_text(secret);
        setup.platform = job.platform;
        setup.options = job.options;
        Communicator comm(std::make_unique<CommunicatorImpl>(std::move(setup), book));
        body(comm);
      } catch (const Error& e) {
        errors[rank] = e.describe();  // "<kind>: <text>"
      } catch (const std::exception& e) {
        errors[rank] = std::string("not a multilane::Error: ") + e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (beside_thread.joinable()) beside_thread.join();
  return errors;
}

inline LocalJob local_job(int ranks, int lanes = 1, int sites = 1) {
  LocalJob job;
  const int per_site = (ranks + sites - 1) / sites;
  job.platform = make_uniform_platform(sites, per_site, lanes, 1, 1.25e9, 20e-6, 1e-3, 1.25e9, 1e8);
  job.platform.place_block(ranks);
  job.options.timeout = std::chrono::seconds(20);
  return job;
}

// `nodes` nodes of one site with `per_node` ranks each (block placement): the ranks of a node
// share memory (hier-shm) as threads of this process.
inline LocalJob smp_job(int nodes, int per_node) {
  LocalJob job;
  job.platform = make_uniform_platform(1, nodes, 1, per_node, 1.25e9, 20e-6, 0, 0, 0);
  job.platform.place_block(nodes * per_node);
  job.options.timeout = std::chrono::seconds(20);
  return job;
}

inline std::vector<std::byte> bytes_pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>((i * 131 + seed * 17 + (i >> 9)) & 0xff);
  }
  return bytes;
}

}  // namespace multilane::testing
