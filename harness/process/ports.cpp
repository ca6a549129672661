#include "harness/process/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "harness/core/error.h"
#include "harness/process/fd.h"

namespace kvbench::process {

int find_free_loopback_port() {
  UniqueFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) {
    throw Error(std::string("cannot create a TCP socket: ") + std::strerror(errno));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free ephemeral port
  if (::bind(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw Error(std::string("cannot bind a TCP socket on 127.0.0.1: ") + std::strerror(errno));
  }
  socklen_t len = sizeof addr;
  if (::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw Error(std::string("cannot read the bound port: ") + std::strerror(errno));
  }
  return ntohs(addr.sin_port);
}

}  // namespace kvbench::process
