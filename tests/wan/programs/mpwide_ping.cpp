// tests/wan/programs/mpwide_ping.cpp — a program written against MPWide's calls, as its paper
// describes them, built against multilane's mpwide_compat.h. Run as two processes (direct) or
// three (two ends and a forwarder); prints "mpwide_ping <role>: ok" and exits 0 when every
// byte arrived as sent.
//
//   mpwide_ping listen PORT0 PORT1 PORT2          channel 0 is the "LAN" channel, 1 and 2 the
//   mpwide_ping connect HOST PORT0 PORT1 PORT2    two streams of the "WAN" path
//   mpwide_ping forward PORT_A PORT_B             forwards between two listening channels
//   mpwide_ping end SIDE HOST PORT                one end (SIDE 0 or 1) behind the forwarder
#include <multilane/mpwide_compat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

std::vector<char> Pattern(long long size, int seed) {
  std::vector<char> bytes(static_cast<size_t>(size));
  for (long long i = 0; i < size; ++i)
    bytes[i] = static_cast<char>((i * 7 + seed * 31 + (i >> 10)) & 0xff);
  return bytes;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "mpwide_ping: FAILED: %s (last error: %s)\n", what, MPW_LastError());
    ++failures;
  }
}

bool Same(const char* a, const std::vector<char>& b) {
  return std::memcmp(a, b.data(), b.size()) == 0;
}

// The exchanges of the paper's Fig. 1 and the other calls of its Table 1, seen from one side.
void Direct(bool listening) {
  const int side = listening ? 0 : 1;
  int LANChannels[1] = {0};
  int WANChannels[2] = {1, 2};

  // A message from the LAN side.
  const int MsgSize = 100;
  std::vector<char> Lan = Pattern(MsgSize, 1);
  std::vector<char> RecvBuf(MsgSize);
  if (listening) {
    Check(MPW_Recv(RecvBuf.data(), MsgSize, LANChannels, 1) == 0, "MPW_Recv");
    Check(Same(RecvBuf.data(), Lan), "MPW_Recv data");
  } else {
    Check(MPW_Send(Lan.data(), MsgSize, LANChannels, 1) == 0, "MPW_Send");
  }

  // A WAN exchange split over two channels, odd size.
  const long long Big = 1024 * 1024 + 1;
  std::vector<char> Mine = Pattern(Big, 10 + side), Theirs(Big);
  Check(MPW_SendRecv(Mine.data(), Big, Theirs.data(), Big, WANChannels, 2) == 0, "MPW_SendRecv");
  Check(Same(Theirs.data(), Pattern(Big, 11 - side)), "MPW_SendRecv data");

  // A ring step: send over channel 1, receive over channel 2 (and the reverse at the peer).
  const long long Out = listening ? 5000 : 7000, In = listening ? 7000 : 5000;
  std::vector<char> CycleOut = Pattern(Out, 20 + side), CycleIn(In);
  int One[1] = {1}, Two[1] = {2};
  Check(MPW_Cycle(CycleOut.data(), Out, CycleIn.data(), In, listening ? One : Two, 1,
                  listening ? Two : One, 1) == 0,
        "MPW_Cycle");
  Check(Same(CycleIn.data(), Pattern(In, 21 - side)), "MPW_Cycle data");

  // A reply of a size this side does not know.
  const long long MineSize = listening ? 12345 : 99;
  std::vector<char> DOut = Pattern(MineSize, 30 + side), DIn(20000);
  const long long Got = MPW_DSendRecv(DOut.data(), MineSize, DIn.data(), 20000, WANChannels, 2);
  Check(Got == (listening ? 99 : 12345), "MPW_DSendRecv size");
  Check(Got > 0 && Same(DIn.data(), Pattern(Got, 31 - side)), "MPW_DSendRecv data");

  // Unequal parts, one buffer per channel.
  long long Sizes[3] = {10, 20000, 0};
  std::vector<char> P0 = Pattern(10, 40), P1 = Pattern(20000, 41), P2;
  char* Bufs[3] = {P0.data(), P1.data(), P2.data()};
  int All[3] = {0, 1, 2};
  if (listening) {
    std::vector<char> R0(10), R1(20000), R2;
    char* RBufs[3] = {R0.data(), R1.data(), R2.data()};
    Check(MPW_PRecv(RBufs, Sizes, All, 3) == 0, "MPW_PRecv");
    Check(R0 == P0 && R1 == P1, "MPW_PRecv data");
  } else {
    Check(MPW_PSend(Bufs, Sizes, All, 3) == 0, "MPW_PSend");
  }
  long long Back[3] = {3, 3, 3};
  std::vector<char> Q[3], S[3];
  char *QBufs[3], *SBufs[3];
  for (int c = 0; c < 3; ++c) {
    Q[c] = Pattern(3, 50 + c + 3 * side);
    S[c].resize(3);
    QBufs[c] = Q[c].data();
    SBufs[c] = S[c].data();
  }
  Check(MPW_PSendRecv(QBufs, Back, SBufs, Back, All, 3) == 0, "MPW_PSendRecv");
  for (int c = 0; c < 3; ++c)
    Check(S[c] == Pattern(3, 50 + c + 3 * (1 - side)), "MPW_PSendRecv data");

  Check(MPW_Barrier(0) == 0, "MPW_Barrier");
  // A channel that does not exist is an error, not a crash.
  int Missing[1] = {7};
  Check(MPW_Send(Lan.data(), MsgSize, Missing, 1) == -1, "MPW_Send on channel 7 fails");
  Check(std::strstr(MPW_LastError(), "channel 7 does not exist (channels 0..2)") != nullptr,
        "MPW_Send on channel 7 says why");
}

void Forward(int port_a, int port_b) {
  std::string Hosts[2] = {"0", "0"};
  int Ports[2] = {port_a, port_b};
  Check(MPW_Init(Hosts, Ports, 2) == 0, "MPW_Init");
  int A[1] = {0}, B[1] = {1};
  Check(MPW_Relay(A, 1, B, 1) == 0, "MPW_Relay");
}

void End(int side, const char* host, int port) {
  std::string Hosts[1] = {host};
  int Ports[1] = {port};
  Check(MPW_Init(Hosts, Ports, 1) == 0, "MPW_Init");
  int Channel[1] = {0};
  const long long Size = 300000;
  std::vector<char> Mine = Pattern(Size, 60 + side), Theirs(Size);
  Check(MPW_SendRecv(Mine.data(), Size, Theirs.data(), Size, Channel, 1) == 0, "MPW_SendRecv");
  Check(Same(Theirs.data(), Pattern(Size, 61 - side)), "MPW_SendRecv data");
  std::vector<char> DOut = Pattern(1000 + side, 70), DIn(5000);
  const long long Got = MPW_DSendRecv(DOut.data(), 1000 + side, DIn.data(), 5000, Channel, 1);
  Check(Got == 1001 - side, "MPW_DSendRecv size through the forwarder");
  Check(MPW_Barrier(0) == 0, "MPW_Barrier");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  MPW_setTimeout(10);
  if (role == "listen" && argc == 5) {
    std::string Hosts[3] = {"0", "0", "0"};
    int Ports[3] = {std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4])};
    Check(MPW_Init(Hosts, Ports, 3) == 0, "MPW_Init");
    if (failures == 0) Direct(true);
  } else if (role == "connect" && argc == 6) {
    std::string Hosts[3] = {argv[2], argv[2], argv[2]};
    int Ports[3] = {std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5])};
    Check(MPW_Init(Hosts, Ports, 3) == 0, "MPW_Init");
    if (failures == 0) Direct(false);
  } else if (role == "forward" && argc == 4) {
    Forward(std::atoi(argv[2]), std::atoi(argv[3]));
  } else if (role == "end" && argc == 5) {
    End(std::atoi(argv[2]), argv[3], std::atoi(argv[4]));
  } else {
    std::fprintf(stderr, "usage: mpwide_ping listen|connect|forward|end ...\n");
    return 2;
  }
  MPW_Finalize();
  if (failures > 0) return 1;
  std::printf("mpwide_ping %s: ok\n", role.c_str());
  return 0;
}
