// Units: exact values of parse_size / parse_duration / parse_bandwidth, their error messages,
// and the readable and exact formatters.
#include <gtest/gtest.h>

#include <string>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"

namespace multilane {
namespace {

std::string usage_error(auto&& call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ParseSize, PlainAndUnits) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4097"), 4097u);
  EXPECT_EQ(parse_size("64KiB"), 65536u);
  EXPECT_EQ(parse_size("1MiB"), 1048576u);
  EXPECT_EQ(parse_size("1GiB"), 1073741824u);
  EXPECT_EQ(parse_size("1.5GB"), 1500000000u);
  EXPECT_EQ(parse_size("1048577B"), 1048577u);
  EXPECT_EQ(parse_size("2KB"), 2000u);
  EXPECT_EQ(parse_size("2kB"), 2000u);
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size("64 KiB"), 65536u);
}

TEST(ParseSize, Errors) {
  EXPECT_EQ(usage_error([] { parse_size("12XB"); }),
            "size \"12XB\" does not parse: expected a number with an optional unit B, KB, MB, "
            "GB, KiB, MiB, GiB");
  EXPECT_EQ(usage_error([] { parse_size("-1"); }),
            "size \"-1\" does not parse: negative values are not allowed; expected a number with "
            "an optional unit B, KB, MB, GB, KiB, MiB, GiB");
  EXPECT_EQ(usage_error([] { parse_size("0.5B"); }),
            "size \"0.5B\" does not parse: expected a whole number of bytes below 2^64 (a number "
            "with an optional unit B, KB, MB, GB, KiB, MiB, GiB)");
  EXPECT_EQ(usage_error([] { parse_size("99999999999GiB"); }),
            "size \"99999999999GiB\" does not parse: expected a whole number of bytes below 2^64 "
            "(a number with an optional unit B, KB, MB, GB, KiB, MiB, GiB)");
  EXPECT_THROW(parse_size(""), UsageError);
  EXPECT_THROW(parse_size("KiB"), UsageError);
  EXPECT_THROW(parse_size("1.2.3"), UsageError);
  EXPECT_THROW(parse_size("1kib"), UsageError);
}

TEST(ParseSizeList, ValuesAndErrors) {
  EXPECT_EQ(parse_size_list("0,1,7,1KiB"), (std::vector<std::uint64_t>{0, 1, 7, 1024}));
  EXPECT_EQ(parse_size_list(" 4 , 1MiB "), (std::vector<std::uint64_t>{4, 1048576}));
  EXPECT_EQ(usage_error([] { parse_size_list("0,1,x"); }),
            "size \"x\" does not parse: expected a number with an optional unit B, KB, MB, GB, "
            "KiB, MiB, GiB");
  EXPECT_EQ(usage_error([] { parse_size_list("1,,2"); }),
            "size list \"1,,2\" does not parse: expected sizes separated by commas, like "
            "0,1,7,1KiB");
}

TEST(ParseDuration, Values) {
  EXPECT_DOUBLE_EQ(parse_duration("10ms"), 0.01);
  EXPECT_DOUBLE_EQ(parse_duration("5us"), 5e-6);
  EXPECT_DOUBLE_EQ(parse_duration("5\u00b5s"), 5e-6);
  EXPECT_DOUBLE_EQ(parse_duration("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(parse_duration("250ns"), 250e-9);
  EXPECT_DOUBLE_EQ(parse_duration("0s"), 0);
  EXPECT_DOUBLE_EQ(parse_duration("50 us"), 50e-6);
}

TEST(ParseDuration, Errors) {
  EXPECT_EQ(usage_error([] { parse_duration("10"); }),
            "duration \"10\" does not parse: expected a number with a unit s, ms, us, ns");
  EXPECT_EQ(usage_error([] { parse_duration("-1ms"); }),
            "duration \"-1ms\" does not parse: negative values are not allowed; expected a number "
            "with a unit s, ms, us, ns");
  EXPECT_THROW(parse_duration("inf s"), UsageError);
  EXPECT_THROW(parse_duration("10 min"), UsageError);
}

TEST(ParseBandwidth, Values) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Gbit/s"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("250Mbit/s"), 31.25e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("125MB/s"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("10GiB/s"), 10737418240.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Gbps"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Gb/s"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("4GB/s"), 4e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8bit/s"), 1);
}

TEST(ParseBandwidth, Errors) {
  EXPECT_EQ(usage_error([] { parse_bandwidth("1Gbit"); }),
            "bandwidth \"1Gbit\" does not parse: expected a number with a unit bit/s, kbit/s, "
            "Mbit/s, Gbit/s, bps, kbps, Mbps, Gbps, Gb/s, B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, "
            "GiB/s");
  EXPECT_THROW(parse_bandwidth("-1Gbit/s"), UsageError);
  EXPECT_THROW(parse_bandwidth("1gbit/s"), UsageError);
}

TEST(Format, Readable) {
  EXPECT_EQ(format_size(65536), "64 KiB");
  EXPECT_EQ(format_size(1048576), "1 MiB");
  EXPECT_EQ(format_size(1048577), "1048577 B");
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1000), "1 KB");
  EXPECT_EQ(format_duration(0.01), "10 ms");
  EXPECT_EQ(format_duration(1.534), "1.53 s");
  EXPECT_EQ(format_duration(50e-6), "50 us");
  EXPECT_EQ(format_duration(0.9999), "1 s");
  EXPECT_EQ(format_duration(0), "0 s");
  EXPECT_EQ(format_bandwidth(125e6), "1 Gbit/s");
  EXPECT_EQ(format_bandwidth(31.25e6), "250 Mbit/s");
  EXPECT_EQ(format_bandwidth(4e9), "32 Gbit/s");
}

TEST(Format, ReadableTextParsesBack) {
  EXPECT_EQ(parse_size(format_size(65536)), 65536u);
  EXPECT_DOUBLE_EQ(parse_duration(format_duration(0.01)), 0.01);
  EXPECT_DOUBLE_EQ(parse_bandwidth(format_bandwidth(125e6)), 125e6);
}

TEST(Format, ExactIsShortAndRoundTrips) {
  EXPECT_EQ(format_duration_exact(0.01), "10ms");
  EXPECT_EQ(format_duration_exact(50e-6), "50us");
  EXPECT_EQ(format_bandwidth_exact(125e6), "1Gbit/s");
  EXPECT_EQ(format_bandwidth_exact(4e9), "4GB/s");
  for (const double value : {1e-3, 1.234567e-5, 0.1 + 0.2, 3.0, 7e-9}) {
    EXPECT_EQ(parse_duration(format_duration_exact(value)), value);
  }
  for (const double value : {1.0, 31.25e6, 1.0 / 3.0, 123456789.123, 1e12}) {
    EXPECT_EQ(parse_bandwidth(format_bandwidth_exact(value)), value);
  }
}

}  // namespace
}  // namespace multilane
