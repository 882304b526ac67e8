// runtime/launch/address_book.hpp — how ranks learn where the others listen.
//
// Each rank publishes one "host:port" per lane of its node and looks up the others' before it
// sends. In a job the rendezvous store does this (keys "lanes/<rank>"); tests that run several
// ranks inside one process use an in-memory book.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

class AddressBook {
 public:
  virtual ~AddressBook() = default;
  virtual void publish(int rank, const std::vector<std::string>& lane_addresses) = 0;
  // In place of publish() when this rank cannot take part (it failed to listen, a bad setting):
  // the others' lookup() of it fails at once with `why` instead of waiting out the timeout.
  virtual void publish_failure(int rank, const Failure& why) = 0;
  // Waits until `rank` published (bounded by the book's own timeout). Throws the Error of the
  // failure's kind, "rank R could not set up: WHY", when it published a failure.
  virtual std::vector<std::string> lookup(int rank) = 0;
};

// A published value that is a failure: "!", the kind's number, ":" and why.
std::string failure_value(const Failure& why);
// Throws the failure's Error when `value` is a failure of `rank`.
void check_not_failure(int rank, const std::string& value);

// "a,b,c" <-> {"a","b","c"}: the value stored at the rendezvous.
std::string join_addresses(const std::vector<std::string>& addresses);
std::vector<std::string> split_addresses(const std::string& text);

}  // namespace multilane::runtime
