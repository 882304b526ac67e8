// Tests of the environment contract (runtime/launch/job_env.hpp): defaults, the mpirun and PMI
// fallbacks, the round trip a launcher relies on, and the exact error texts.
#include "runtime/launch/job_env.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "multilane/errors.hpp"

namespace multilane::runtime {
namespace {

using Variables = std::map<std::string, std::string>;

const std::string kSecret = "0123456789abcdef-secret";

// The message of the UsageError that reading `variables` throws ("" when none).
std::string error_of(const Variables& variables) {
  try {
    JobEnvironment::from_variables(variables);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

Variables job_of_four(int rank) {
  return {{"MULTILANE_RANK", std::to_string(rank)},
          {"MULTILANE_SIZE", "4"},
          {"MULTILANE_RENDEZVOUS", "127.0.0.1:4000"},
          {"MULTILANE_SECRET", kSecret}};
}

TEST(JobEnvironment, NoVariablesIsALoneProcess) {
  const JobEnvironment env = JobEnvironment::from_variables({{"HOME", "/root"}});
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.size, 1);
  EXPECT_EQ(env.rendezvous, "");
  EXPECT_FALSE(env.serve_rendezvous);
  EXPECT_EQ(env.job_id, 0u);
  EXPECT_EQ(env.secret, "");
  EXPECT_EQ(env.platform_file, "");
  EXPECT_EQ(env.timeout, std::chrono::milliseconds(60'000));
  EXPECT_FALSE(env.explain);
  EXPECT_TRUE(env.settings.empty());
}

TEST(JobEnvironment, ReadsEveryContractVariable) {
  Variables v = job_of_four(2);
  v["MULTILANE_JOB_ID"] = "18446744073709551615";
  v["MULTILANE_PLATFORM"] = "/tmp/p.toml";
  v["MULTILANE_TIMEOUT"] = "0.25";
  v["MULTILANE_EXPLAIN"] = "1";
  v["MULTILANE_STREAMS"] = "4";
  v["OMPI_COMM_WORLD_RANK"] = "3";  // ours take precedence
  const JobEnvironment env = JobEnvironment::from_variables(v);
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.size, 4);
  EXPECT_EQ(env.rendezvous, "127.0.0.1:4000");
  EXPECT_EQ(env.job_id, 18446744073709551615ull);
  EXPECT_EQ(env.secret, kSecret);
  EXPECT_EQ(env.platform_file, "/tmp/p.toml");
  EXPECT_EQ(env.timeout, std::chrono::milliseconds(250));
  EXPECT_TRUE(env.explain);
  EXPECT_EQ(env.settings, (std::map<std::string, std::string>{{"STREAMS", "4"}}));
}

TEST(JobEnvironment, FallsBackToOpenMpiThenPmi) {
  Variables v = {{"OMPI_COMM_WORLD_RANK", "1"},
                 {"OMPI_COMM_WORLD_SIZE", "3"},
                 {"PMI_RANK", "0"},
                 {"PMI_SIZE", "5"},
                 {"MULTILANE_RENDEZVOUS", "h:1"},
                 {"MULTILANE_SECRET", kSecret}};
  JobEnvironment env = JobEnvironment::from_variables(v);
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.size, 3);
  v.erase("OMPI_COMM_WORLD_RANK");
  v.erase("OMPI_COMM_WORLD_SIZE");
  env = JobEnvironment::from_variables(v);
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.size, 5);
}

TEST(JobEnvironment, RankZeroServesTheStoreOnlyWhenAsked) {
  Variables v = job_of_four(0);
  EXPECT_FALSE(JobEnvironment::from_variables(v).serve_rendezvous);
  v["MULTILANE_RENDEZVOUS_SERVER"] = "rank0";
  EXPECT_TRUE(JobEnvironment::from_variables(v).serve_rendezvous);
  v["MULTILANE_RANK"] = "1";
  EXPECT_FALSE(JobEnvironment::from_variables(v).serve_rendezvous);
  v["MULTILANE_RENDEZVOUS_SERVER"] = "external";
  EXPECT_FALSE(JobEnvironment::from_variables(v).serve_rendezvous);
}

TEST(JobEnvironment, JobIdDefaultsToOneDerivedFromTheRendezvous) {
  const auto a = JobEnvironment::from_variables(job_of_four(0));
  const auto b = JobEnvironment::from_variables(job_of_four(3));
  EXPECT_NE(a.job_id, 0u);
  EXPECT_EQ(a.job_id, b.job_id);  // every rank agrees without being told
  Variables other = job_of_four(0);
  other["MULTILANE_RENDEZVOUS"] = "127.0.0.1:4001";
  EXPECT_NE(JobEnvironment::from_variables(other).job_id, a.job_id);
}

TEST(JobEnvironment, ToEnvironmentRoundTrips) {
  JobEnvironment env;
  env.rank = 5;
  env.size = 9;
  env.rendezvous = "[::1]:4711";
  env.serve_rendezvous = false;
  env.job_id = 1234567890123ull;
  env.secret = kSecret;
  env.platform_file = "/x/y.toml";
  env.timeout = std::chrono::milliseconds(1234567);
  env.explain = true;
  env.settings = {{"STREAMS", "8"}, {"SEGMENT", "64KiB"}};
  const auto exported = env.to_environment();
  const Variables variables(exported.begin(), exported.end());
  EXPECT_EQ(variables.at("MULTILANE_TIMEOUT"), "1234.567");
  EXPECT_EQ(JobEnvironment::from_variables(variables), env);

  env.rank = 0;
  env.serve_rendezvous = true;
  const auto served = env.to_environment();
  EXPECT_EQ(JobEnvironment::from_variables(Variables(served.begin(), served.end())), env);
}

TEST(JobEnvironment, FromEnvironmentReadsTheProcess) {
  struct Unset {
    ~Unset() {
      unsetenv("MULTILANE_EXPLAIN");
      unsetenv("MULTILANE_TEST_SETTING");
    }
  } unset;
  setenv("MULTILANE_EXPLAIN", "1", 1);
  setenv("MULTILANE_TEST_SETTING", "a=b", 1);
  const JobEnvironment env = JobEnvironment::from_environment();
  EXPECT_TRUE(env.explain);
  EXPECT_EQ(env.settings.at("TEST_SETTING"), "a=b");
}

TEST(JobEnvironment, RankAndSizeErrors) {
  EXPECT_EQ(error_of(job_of_four(7)),
            "MULTILANE_RANK=7 is out of range: must be 0..3 (MULTILANE_SIZE=4)");
  Variables v = job_of_four(0);
  v["MULTILANE_RANK"] = "-1";
  EXPECT_EQ(error_of(v), "MULTILANE_RANK=-1 is out of range: must be 0..3 (MULTILANE_SIZE=4)");
  v["MULTILANE_RANK"] = "one";
  EXPECT_EQ(error_of(v),
            "MULTILANE_RANK=one is not a whole number: must be 0..3 (MULTILANE_SIZE=4)");
  v["MULTILANE_RANK"] = "0";
  v["MULTILANE_SIZE"] = "0";
  EXPECT_EQ(error_of(v), "MULTILANE_SIZE=0 is out of range: must be 1..4194304");
  v["MULTILANE_SIZE"] = "4x";
  EXPECT_EQ(error_of(v), "MULTILANE_SIZE=4x is not a whole number: must be 1..4194304");
  EXPECT_EQ(error_of({{"MULTILANE_RANK", "0"}}),
            "MULTILANE_RANK is set but MULTILANE_SIZE is not: set both, or neither for a lone "
            "process (rank 0 of 1)");
  EXPECT_EQ(error_of({{"OMPI_COMM_WORLD_RANK", "4"},
                      {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"MULTILANE_RENDEZVOUS", "h:1"},
                      {"MULTILANE_SECRET", kSecret}}),
            "OMPI_COMM_WORLD_RANK=4 is out of range: must be 0..3 (OMPI_COMM_WORLD_SIZE=4)");
  EXPECT_EQ(error_of({{"PMI_SIZE", "2"}}),
            "PMI_SIZE is set but PMI_RANK is not: set both, or neither for a lone process "
            "(rank 0 of 1)");
}

TEST(JobEnvironment, RendezvousErrors) {
  Variables v = job_of_four(1);
  v.erase("MULTILANE_RENDEZVOUS");
  EXPECT_EQ(error_of(v),
            "a job of 4 ranks needs MULTILANE_RENDEZVOUS=host:port, the key-value store where "
            "the ranks meet (multilane launch sets it; for mpirun and ssh see "
            "docs/launching.md)");
  v["MULTILANE_RENDEZVOUS"] = "localhost";
  EXPECT_EQ(error_of(v),
            "MULTILANE_RENDEZVOUS=localhost is not allowed: \"localhost\" is not host:port (no "
            "port)");
  v["MULTILANE_RENDEZVOUS"] = "::1:4000";
  EXPECT_EQ(error_of(v),
            "MULTILANE_RENDEZVOUS=::1:4000 is not allowed: \"::1:4000\" is not host:port (write "
            "an IPv6 address in brackets, [::1]:4000)");
  v["MULTILANE_RENDEZVOUS"] = "host:70000";
  EXPECT_EQ(error_of(v),
            "MULTILANE_RENDEZVOUS=host:70000 is not allowed: \"host:70000\" is not host:port "
            "(the port must be 0..65535)");
  v["MULTILANE_RENDEZVOUS"] = "host:0";
  EXPECT_EQ(error_of(v),
            "MULTILANE_RENDEZVOUS=host:0 is not allowed: port 0 cannot be reached: give the "
            "port the store listens on");
  v["MULTILANE_RENDEZVOUS"] = "host:1";
  v["MULTILANE_RENDEZVOUS_SERVER"] = "rank1";
  EXPECT_EQ(error_of(v),
            "MULTILANE_RENDEZVOUS_SERVER=rank1 is not allowed: must be rank0 (rank 0 serves the "
            "store) or external (a launcher serves it)");
  EXPECT_EQ(error_of({{"MULTILANE_RENDEZVOUS_SERVER", "rank0"}}),
            "MULTILANE_RENDEZVOUS_SERVER=rank0 needs MULTILANE_RENDEZVOUS=host:port, the "
            "address at which rank 0 serves the store");
}

TEST(JobEnvironment, SecretErrors) {
  Variables v = job_of_four(0);
  v.erase("MULTILANE_SECRET");
  EXPECT_EQ(error_of(v),
            "a job of 4 ranks needs a secret: set MULTILANE_SECRET to the same random text of "
            "at least 16 characters on every rank, e.g. MULTILANE_SECRET=$(head -c 24 "
            "/dev/urandom | base64) (multilane launch sets it for you)");
  v["MULTILANE_SECRET"] = "short";
  EXPECT_EQ(error_of(v),
            "MULTILANE_SECRET is too short (5 characters): use at least 16 random characters, "
            "e.g. MULTILANE_SECRET=$(head -c 24 /dev/urandom | base64)");
}

TEST(JobEnvironment, OptionErrors) {
  const std::string timeout_rule =
      "must be a number of seconds > 0 and at most 10000000 (e.g. 60 or 0.5)";
  for (const char* bad : {"0", "-1", "abc", "", "inf", "nan", "1e9", "5s"}) {
    EXPECT_EQ(error_of({{"MULTILANE_TIMEOUT", bad}}),
              fmt::format("MULTILANE_TIMEOUT={} is not allowed: {}", bad, timeout_rule));
  }
  EXPECT_EQ(error_of({{"MULTILANE_EXPLAIN", "yes"}}),
            "MULTILANE_EXPLAIN=yes is not allowed: must be 0 or 1");
  EXPECT_EQ(error_of({{"MULTILANE_JOB_ID", "-3"}}),
            "MULTILANE_JOB_ID=-3 is not allowed: must be a whole number "
            "0..18446744073709551615, the same on every rank");
}

TEST(JobEnvironment, TimeoutSecondsRoundTrip) {
  EXPECT_EQ(parse_timeout_seconds("60"), std::chrono::milliseconds(60'000));
  EXPECT_EQ(parse_timeout_seconds("0.0001"), std::chrono::milliseconds(1));
  EXPECT_EQ(timeout_seconds_text(std::chrono::milliseconds(60'000)), "60");
  EXPECT_EQ(timeout_seconds_text(std::chrono::milliseconds(1)), "0.001");
  for (const long ms : {1L, 7L, 999L, 1001L, 123456789L}) {
    const std::chrono::milliseconds t(ms);
    EXPECT_EQ(parse_timeout_seconds(timeout_seconds_text(t)), t) << ms;
  }
}

TEST(JobEnvironment, HostPortText) {
  EXPECT_EQ(host_port_text("127.0.0.1", 80), "127.0.0.1:80");
  EXPECT_EQ(host_port_text("::1", 80), "[::1]:80");
  const HostPort v6 = parse_host_port("[::1]:80");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 80);
}

}  // namespace
}  // namespace multilane::runtime
