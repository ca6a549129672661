#include "harness/process/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace kvbench::process {
namespace {

// Binds and listens on 127.0.0.1:port; returns the socket or -1.
int listen_on(int port) {
  const int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(sock, 1) != 0) {
    close(sock);
    return -1;
  }
  return sock;
}

TEST(Ports, FreeLoopbackPortCanBeBound) {
  const int port = find_free_loopback_port();
  EXPECT_GT(port, 0);
  EXPECT_LE(port, 65535);
  const int sock = listen_on(port);
  EXPECT_GE(sock, 0) << "port " << port;
  close(sock);
}

TEST(Ports, PortInUseIsNotReturned) {
  const int port = find_free_loopback_port();
  const int sock = listen_on(port);
  ASSERT_GE(sock, 0);
  EXPECT_NE(find_free_loopback_port(), port);
  close(sock);
}

}  // namespace
}  // namespace kvbench::process
