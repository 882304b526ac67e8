// tests/wan/file_copy_test.cpp — `multilane cp` / `serve`: byte-identical copies over 4
// streams, an interruption then a resume from what arrived intact, refusals (existing file
// without --force, paths leaving the directory), a write error on the server (file size limit
// standing in for a full disk) and a vanished server, each with a clear message; the message
// encoding and the progress lines; and both commands as processes, killed and resumed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/tcp/auth.hpp"
#include "wan/file_client.hpp"
#include "wan/file_destination.hpp"
#include "wan/file_protocol.hpp"
#include "wan/file_server.hpp"
#include "wan/progress.hpp"
#include "wan_testing.hpp"

namespace multilane::wan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::ThrowsMessage;
using namespace testing;

void write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::byte> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// A source directory with one file and a served directory, removed at the end.
struct Dirs {
  explicit Dirs(const std::string& name) : base(scratch_dir(name)) {
    fs::create_directories(base / "served");
    fs::create_directories(base / "local");
  }
  ~Dirs() {
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
  fs::path base;
  fs::path served() const { return base / "served"; }
  fs::path local(const std::string& name) const { return base / "local" / name; }
};

class RunningServer {
 public:
  explicit RunningServer(const fs::path& root) {
    FileServerOptions options;
    options.root = root;
    options.gate.listen = {asio::ip::make_address("127.0.0.1"), 0};
    options.gate.job_id = kJob;
    options.gate.secret = runtime::JobSecret::from_text(kSecret);
    options.gate.handshake_timeout = 2s;
    options.timeout = 5s;
    server_ = std::make_unique<FileServer>(options, [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      log_.push_back(line);
    });
    thread_ = std::thread([this] { server_->run(); });
  }
  ~RunningServer() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    server_->stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  std::string log() const {
    std::lock_guard lock(mutex_);
    std::string text;
    for (const auto& line : log_) text += line + "\n";
    return text;
  }
  bool wait_for_log(const std::string& text) const {
    for (int i = 0; i < 500; ++i) {
      if (log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  std::unique_ptr<FileServer> server_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<std::string> log_;
};

CopyOptions copy_options(const fs::path& source, std::uint16_t port, const std::string& dest) {
  CopyOptions o;
  o.source = source.string();
  o.host = "127.0.0.1";
  o.port = port;
  o.destination = dest;
  o.credentials = credentials();
  o.path = options(4);
  o.path.timeout = 5s;
  o.block_size = 256 * 1024;
  return o;
}

const auto kQuiet = [](const CopyProgress&) {};

TEST(FileCopy, CopiesByteIdenticalOverFourStreams) {
  Dirs dirs("copy");
  const auto content = pattern(3 * 1024 * 1024 + 17, 3);
  write_file(dirs.local("data.bin"), content);
  RunningServer server(dirs.served());
  std::vector<std::uint64_t> seen;
  const CopyResult result = copy_file(copy_options(dirs.local("data.bin"), server.port(), ""),
                                      [&](const CopyProgress& p) { seen.push_back(p.held); });
  EXPECT_EQ(result.size, content.size());
  EXPECT_EQ(result.resumed_from, 0u);
  EXPECT_TRUE(read_file(dirs.served() / "data.bin") == content);
  EXPECT_FALSE(fs::exists(dirs.served() / "data.bin.multilane-part"));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), content.size());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_TRUE(server.wait_for_log("received data.bin (3 MiB)"));
}

TEST(FileCopy, ResumesFromWhatArrivedIntactAfterAnInterruption) {
  Dirs dirs("resume");
  const auto content = pattern(4 * 1024 * 1024 + 5, 4);
  write_file(dirs.local("big.bin"), content);
  RunningServer server(dirs.served());
  struct Interrupted {};
  EXPECT_THROW(copy_file(copy_options(dirs.local("big.bin"), server.port(), "sub/../big.bin"),
                         [](const CopyProgress& p) {
                           if (p.held >= 1024 * 1024) throw Interrupted{};
                         }),
               Interrupted);
  ASSERT_TRUE(server.wait_for_log("interrupted after")) << server.log();
  EXPECT_THAT(server.log(), HasSubstr("the partial file big.bin.multilane-part is kept"));
  const auto part = dirs.served() / "big.bin.multilane-part";
  ASSERT_TRUE(fs::exists(part));
  const auto held = fs::file_size(part);
  EXPECT_GE(held, 1024u * 1024);
  EXPECT_LT(held, content.size());
  EXPECT_FALSE(fs::exists(dirs.served() / "big.bin"));

  std::uint64_t first_report = 0;
  const CopyResult result = copy_file(copy_options(dirs.local("big.bin"), server.port(), "big.bin"),
                                      [&](const CopyProgress& p) {
                                        if (first_report == 0) first_report = p.resumed_from;
                                      });
  EXPECT_EQ(result.resumed_from, held);
  EXPECT_EQ(first_report, held);
  EXPECT_TRUE(read_file(dirs.served() / "big.bin") == content);
  EXPECT_FALSE(fs::exists(part));
}

// A partial file whose bytes differ from the source is not trusted: the copy starts over.
TEST(FileCopy, AForeignPartialFileIsNotTrusted) {
  Dirs dirs("foreign");
  const auto content = pattern(600'000, 5);
  write_file(dirs.local("f.bin"), content);
  write_file(dirs.served() / "f.bin.multilane-part", pattern(300'000, 6));
  RunningServer server(dirs.served());
  const CopyResult result = copy_file(copy_options(dirs.local("f.bin"), server.port(), ""), kQuiet);
  EXPECT_EQ(result.resumed_from, 0u);
  EXPECT_TRUE(read_file(dirs.served() / "f.bin") == content);
}

TEST(FileCopy, RefusesToOverwriteWithoutForceAndPathsLeavingTheDirectory) {
  Dirs dirs("refuse");
  write_file(dirs.local("a.txt"), pattern(10, 1));
  write_file(dirs.served() / "a.txt", pattern(20, 2));
  RunningServer server(dirs.served());
  auto o = copy_options(dirs.local("a.txt"), server.port(), "a.txt");
  EXPECT_THAT([&] { copy_file(o, kQuiet); },
              ThrowsMessage<CopyError>(HasSubstr(
                  "the server refused the copy: a.txt exists on the server (use --force to "
                  "overwrite it)")));
  EXPECT_TRUE(read_file(dirs.served() / "a.txt") == pattern(20, 2));
  o.force = true;
  copy_file(o, kQuiet);
  EXPECT_TRUE(read_file(dirs.served() / "a.txt") == pattern(10, 1));
  o.destination = "../outside.txt";
  EXPECT_THAT([&] { copy_file(o, kQuiet); },
              ThrowsMessage<CopyError>(HasSubstr("../outside.txt leaves the served directory")));
  o.destination = "missing/dir/";
  EXPECT_THAT([&] { copy_file(o, kQuiet); },
              ThrowsMessage<CopyError>(HasSubstr("directory missing/dir does not exist")));
}

// The server's file size limit makes its writes fail like a full disk would.
TEST(FileCopy, AWriteErrorOnTheServerIsReportedAndThePartialFileKept) {
  Dirs dirs("full");
  const auto content = pattern(2 * 1024 * 1024, 7);
  write_file(dirs.local("g.bin"), content);
  RunningServer server(dirs.served());
  rlimit before{};
  ::getrlimit(RLIMIT_FSIZE, &before);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = before;
  limited.rlim_cur = 512 * 1024;
  ::setrlimit(RLIMIT_FSIZE, &limited);
  std::string message;
  try {
    copy_file(copy_options(dirs.local("g.bin"), server.port(), ""), kQuiet);
  } catch (const CopyError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_THAT(message, MatchesRegex("the server failed: writing g\\.bin\\.multilane-part at "
                                    "offset [0-9]+ failed: File too large \\(the partial file is "
                                    "kept: 512 KiB held for a resume\\)"));
  EXPECT_EQ(fs::file_size(dirs.served() / "g.bin.multilane-part"), 512u * 1024);
}

TEST(FileCopy, AVanishedServerIsNamedWithWhatItHolds) {
  Dirs dirs("vanish");
  write_file(dirs.local("h.bin"), pattern(3 * 1024 * 1024, 8));
  auto server = std::make_unique<RunningServer>(dirs.served());
  std::string message;
  try {
    copy_file(copy_options(dirs.local("h.bin"), server->port(), ""), [&](const CopyProgress& p) {
      if (p.held >= 512 * 1024 && server) server.reset();  // stops it: its sockets close
    });
  } catch (const CopyError& e) {
    message = e.what();
  }
  EXPECT_THAT(message,
              MatchesRegex(".*127\\.0\\.0\\.1:[0-9]+.*; the server holds [0-9.]+ [KM]iB of "
                           "3 MiB for a resume: run the same command again"));
}

TEST(FileCopy, UnreadableSourceIsAUsageError) {
  EXPECT_THAT([] { copy_file(copy_options("/nonexistent/file", 1, ""), kQuiet); },
              ThrowsMessage<UsageError>(HasSubstr("cannot open /nonexistent/file: No such file")));
}

TEST(FileProtocol, MessagesRoundTripAndGarbageIsRefused) {
  const CopyRequest request{true, 12345, 4096, "dir/x", "x.bin"};
  EXPECT_EQ(decode_request(encode(request)), request);
  const CopyOffer offer{"", 77, 0xabcdef};
  EXPECT_EQ(decode_offer(encode(offer)), offer);
  EXPECT_EQ(decode_ack(encode(CopyAck{5, "disk full"})), (CopyAck{5, "disk full"}));
  EXPECT_EQ(decode_verdict(encode(CopyVerdict{})), CopyVerdict{});
  auto bytes = encode(request);
  EXPECT_FALSE(decode_offer(bytes)) << "another kind";
  bytes.pop_back();
  EXPECT_FALSE(decode_request(bytes)) << "truncated";
  bytes = encode(request);
  bytes.push_back(std::byte{0});
  EXPECT_FALSE(decode_request(bytes)) << "trailing bytes";
  EXPECT_FALSE(decode_start(std::vector<std::byte>(3)));
}

TEST(FileDestination, ResolvesInsideTheDirectoryOnly) {
  Dirs dirs("dest");
  fs::create_directories(dirs.served() / "sub");
  fs::create_symlink("/tmp", dirs.served() / "out");
  const auto root = dirs.served();
  auto shown = [&](const std::string& path) {
    return resolve_destination(root, {false, 1, 4096, path, "n.bin"}).shown;
  };
  EXPECT_EQ(shown(""), "n.bin");
  EXPECT_EQ(shown("/sub/"), "sub/n.bin");
  EXPECT_EQ(shown("sub"), "sub/n.bin");
  EXPECT_EQ(shown("sub/m.bin"), "sub/m.bin");
  EXPECT_THAT([&] { shown("out/x"); },
              ThrowsMessage<CopyRefused>(HasSubstr("through a symbolic link")));
  EXPECT_THAT([&] { shown("sub/../../x"); },
              ThrowsMessage<CopyRefused>(HasSubstr("leaves the served")));
  EXPECT_THAT(
      [&] {
        resolve_destination(root, {false, 1, 4096, "", "../n"});
      },
      ThrowsMessage<CopyRefused>(HasSubstr("\"../n\" is not a file name")));
}

TEST(Progress, LinesShowRateAndTimeLeft) {
  const ProgressSample half{512 * 1024 * 1024, 1024 * 1024 * 1024, 125e6, 4};
  EXPECT_EQ(plain_line("x.bin", half), "x.bin: 512 MiB of 1 GiB (50%), 1 Gbit/s, 0:05 left");
  EXPECT_EQ(bar_line("x.bin", half, 10),
            "x.bin  50% [=====>    ] 512 MiB / 1 GiB  1 Gbit/s  ETA 0:05");
  EXPECT_EQ(eta_text({0, 100, 0, 0}), "?");
  EXPECT_EQ(eta_text({0, 4000, 1, 0}), "1:06:40");
  EXPECT_EQ(eta_text({100, 100, 0, 0}), "0:00");
}

// Both commands as processes: a copy, a refusal without --force, and a copy killed half-way
// (SIGKILL, paced so it takes a while) that the same command then resumes.
TEST(CopyCommands, KilledCopyResumesByteIdentical) {
  Dirs dirs("commands");
  const auto content = pattern(6 * 1024 * 1024 + 3, 9);
  write_file(dirs.local("c.bin"), content);
  const std::vector<std::string> env{std::string("MULTILANE_SECRET=") + kSecret,
                                     "MULTILANE_JOB_ID=4242"};
  Subprocess serve({binary_dir() + "/multilane", "serve", dirs.served().string(), "--listen",
                    "127.0.0.1:0", "--timeout", "5"},
                   env);
  const std::uint16_t port = listening_port(serve, "serving " + dirs.served().string());
  ASSERT_NE(port, 0) << serve.output_so_far();
  const std::vector<std::string> cp{binary_dir() + "/multilane",
                                    "cp",
                                    dirs.local("c.bin").string(),
                                    "127.0.0.1:",
                                    "--port",
                                    std::to_string(port),
                                    "--streams",
                                    "4",
                                    "--block-size",
                                    "256KiB",
                                    "--timeout",
                                    "5"};
  auto with = [](std::vector<std::string> args, std::initializer_list<std::string> more) {
    args.insert(args.end(), more);
    return args;
  };
  {
    // 4 streams of 2 MB/s: 1 MiB after about 1/8 s, the whole file only after 0.8 s, so the kill
    // lands mid-copy even if this thread is descheduled for a while.
    Subprocess slow(with(cp, {"--pacing-rate", "2MB/s"}), env);
    const auto part = dirs.served() / "c.bin.multilane-part";
    for (int i = 0; i < 1000; ++i) {
      std::error_code ec;
      if (fs::file_size(part, ec) >= 1024 * 1024 && !ec) break;
      std::this_thread::sleep_for(2ms);
    }
    slow.signal(SIGKILL);
    slow.wait();
  }
  // The killed client's sockets end only after the kernel sent what they held (still paced);
  // until the server saw that, it rightly refuses a second copy to the same file.
  for (int i = 0; i < 1000; ++i) {
    if (serve.output_so_far().find("interrupted after") != std::string::npos) break;
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(fs::exists(dirs.served() / "c.bin.multilane-part"));
  EXPECT_FALSE(fs::exists(dirs.served() / "c.bin"));
  const Finished resumed = Subprocess(with(cp, {"--progress", "lines"}), env).wait();
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_THAT(resumed.output, MatchesRegex("(.|\\n)*resuming at [0-9.]+ [KM]iB(.|\\n)*"));
  EXPECT_THAT(resumed.output, HasSubstr("c.bin: 6 MiB of 6 MiB (100%)"));
  EXPECT_TRUE(read_file(dirs.served() / "c.bin") == content);
  const Finished again = Subprocess(cp, env).wait();
  EXPECT_EQ(again.status, 2);  // a usage error (multilane/errors.hpp)
  EXPECT_THAT(again.output,
              HasSubstr("multilane cp: error (usage): the server refused the copy: c.bin exists on "
                        "the server (use --force to overwrite it)"));
  serve.signal(SIGTERM);
  const Finished served = serve.wait(10s);
  EXPECT_EQ(served.status, 0) << served.output;
  EXPECT_THAT(served.output, HasSubstr("interrupted after"));
  EXPECT_THAT(served.output, HasSubstr("received c.bin (6 MiB)"));
}

}  // namespace
}  // namespace multilane::wan
