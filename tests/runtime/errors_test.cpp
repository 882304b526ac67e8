// tests/runtime/errors_test.cpp — every failure's kind, as the C++ API, the C API and the CLI's
// exit status give it (multilane/errors.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <asio/error.hpp>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "multilane/errors.hpp"
#include "multilane/multilane.h"
#include "runtime/launch/address_book.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane {
namespace {

const std::vector<ErrorKind> kKinds = {
    ErrorKind::usage,     ErrorKind::platform,       ErrorKind::timeout,
    ErrorKind::peer_gone, ErrorKind::authentication, ErrorKind::mismatch,
    ErrorKind::protocol,  ErrorKind::resource,       ErrorKind::internal};

TEST(Errors, EachKindHasANameAndAnExitStatusThatMapsBack) {
  std::vector<std::string> names;
  for (ErrorKind kind : kKinds) names.emplace_back(kind_name(kind));
  EXPECT_EQ(names, (std::vector<std::string>{"usage", "platform file", "timeout", "peer gone",
                                             "authentication", "mismatch", "protocol", "resource",
                                             "internal"}));
  std::vector<int> statuses;
  for (ErrorKind kind : kKinds) statuses.push_back(exit_status(kind));
  EXPECT_EQ(statuses, (std::vector<int>{2, 2, 3, 4, 5, 6, 7, 8, 9}));
  for (ErrorKind kind : kKinds) {
    if (kind == ErrorKind::platform) continue;  // shares usage's status
    EXPECT_EQ(kind_of_exit_status(exit_status(kind)), kind) << kind_name(kind);
  }
  EXPECT_EQ(kind_of_exit_status(1), ErrorKind::internal);
  EXPECT_EQ(kind_of_exit_status(137), ErrorKind::internal);
}

TEST(Errors, ThrowErrorThrowsTheClassOfTheKind) {
  EXPECT_THROW(throw_error(ErrorKind::usage, "x"), UsageError);
  EXPECT_THROW(throw_error(ErrorKind::platform, "x"), PlatformError);
  for (ErrorKind kind :
       {ErrorKind::timeout, ErrorKind::peer_gone, ErrorKind::authentication, ErrorKind::mismatch,
        ErrorKind::protocol, ErrorKind::resource, ErrorKind::internal}) {
    try {
      throw_error(kind, "what happened");
      ADD_FAILURE() << "nothing thrown";
    } catch (const CommunicationError& e) {
      EXPECT_EQ(e.kind(), kind);
      EXPECT_STREQ(e.what(), "what happened");
      EXPECT_EQ(e.describe(), std::string(kind_name(kind)) + ": what happened");
    }
  }
}

TEST(Errors, AnyExceptionHasAKind) {
  EXPECT_EQ(kind_of(CommunicationError(ErrorKind::timeout, "t")), ErrorKind::timeout);
  EXPECT_EQ(kind_of(std::bad_alloc()), ErrorKind::resource);
  EXPECT_EQ(kind_of(std::logic_error("a bug")), ErrorKind::internal);
  EXPECT_EQ(runtime::Failure::of(UsageError("root 9 is out of range")).describe(),
            "usage: root 9 is out of range");
}

// Peer gone means end of file, reset or broken pipe; timeout means the deadline passed.
TEST(Errors, SocketErrorsHaveTheirKinds) {
  using runtime::kind_of;
  EXPECT_EQ(kind_of(asio::error_code(asio::error::eof)), ErrorKind::peer_gone);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::connection_reset)), ErrorKind::peer_gone);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::broken_pipe)), ErrorKind::peer_gone);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::connection_refused)), ErrorKind::peer_gone);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::timed_out)), ErrorKind::timeout);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::no_buffer_space)), ErrorKind::resource);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::no_descriptors)), ErrorKind::resource);
  EXPECT_EQ(kind_of(asio::error_code(asio::error::invalid_argument)), ErrorKind::internal);
}

// A rank that cannot set up publishes its failure; the others get it with its kind.
TEST(Errors, ASetUpFailureReachesTheOtherRanksWithItsKind) {
  const std::string value =
      runtime::failure_value({ErrorKind::resource, "cannot listen on lane 0: no free port"});
  try {
    runtime::check_not_failure(3, value);
    ADD_FAILURE() << "a failure value passed";
  } catch (const CommunicationError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::resource);
    EXPECT_STREQ(e.what(), "rank 3 could not set up: cannot listen on lane 0: no free port");
  }
  EXPECT_THROW(runtime::check_not_failure(1, runtime::failure_value({ErrorKind::usage, "bad"})),
               UsageError);
  EXPECT_NO_THROW(runtime::check_not_failure(1, "127.0.0.1:4000"));
}

TEST(Errors, TheCApiNamesEachCodesKind) {
  const std::vector<std::pair<int, std::string>> codes = {{ML_OK, "ok"},
                                                          {ML_ERR_USAGE, "usage"},
                                                          {ML_ERR_PLATFORM, "platform file"},
                                                          {ML_ERR_TIMEOUT, "timeout"},
                                                          {ML_ERR_PEER_GONE, "peer gone"},
                                                          {ML_ERR_AUTHENTICATION, "authentication"},
                                                          {ML_ERR_MISMATCH, "mismatch"},
                                                          {ML_ERR_PROTOCOL, "protocol"},
                                                          {ML_ERR_RESOURCE, "resource"},
                                                          {ML_ERR_INTERNAL, "internal"},
                                                          {2, "unknown"},
                                                          {-1, "unknown"}};
  for (const auto& [code, name] : codes) EXPECT_EQ(ml_error_name(code), name) << code;
}

}  // namespace
}  // namespace multilane
