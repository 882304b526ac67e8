// wan/mpwide/c_entry_points.cpp — the C entry points of MPWide's Python bindings, each the
// C++ call it names.
#include <string>
#include <vector>

#include "multilane/mpwide/MPWide.h"

extern "C" {

int MPW_CreatePath_c(char* host, int server_side_base_port, int streams_in_path) {
  return MPW_CreatePath(host != nullptr ? host : "", server_side_base_port, streams_in_path);
}

int MPW_Init_c(char** url, int* ports, int numsockets) {
  std::vector<std::string> urls;
  for (int i = 0; url != nullptr && i < numsockets; ++i) {
    urls.emplace_back(url[i] != nullptr ? url[i] : "");
  }
  return MPW_Init(url != nullptr ? urls.data() : nullptr, ports, numsockets);
}

int MPW_Init1_c(char* url, int port) {
  return MPW_Init(std::string(url != nullptr ? url : ""), port);
}

void MPW_SendRecv1_c(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                     int base_channel) {
  MPW_SendRecv(sendbuf, sendsize, recvbuf, recvsize, base_channel);
}

void MPW_SendRecv_c(char* sendbuf, long long int sendsize, char* recvbuf, long long int recvsize,
                    int* base_channel, int num_channels) {
  MPW_SendRecv(sendbuf, sendsize, recvbuf, recvsize, base_channel, num_channels);
}

void MPW_PSendRecv_c(char** sendbuf, long long int* sendsize, char** recvbuf,
                     long long int* recvsize, int* channel, int num_channels) {
  MPW_PSendRecv(sendbuf, sendsize, recvbuf, recvsize, channel, num_channels);
}

}  // extern "C"
