#include "tests/http/local_servers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace kvbench::http::test_support {
namespace {

constexpr auto kWaitLimit = std::chrono::seconds(5);

// A socket bound to 127.0.0.1 on a free port; returns the descriptor and sets `port`.
int bind_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    throw std::runtime_error("socket() failed");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("bind() on 127.0.0.1 failed");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

bool wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kWaitLimit).count())) == 1;
}

// Reads one request: headers up to the blank line, then Content-Length bytes of body.
void read_request(int fd) {
  std::string received;
  std::size_t header_end = std::string::npos;
  std::size_t wanted = 0;
  char buffer[4096];
  while (header_end == std::string::npos || received.size() < header_end + 4 + wanted) {
    if (!wait_readable(fd)) {
      return;
    }
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      return;
    }
    received.append(buffer, static_cast<std::size_t>(n));
    if (header_end == std::string::npos &&
        (header_end = received.find("\r\n\r\n")) != std::string::npos) {
      const auto at = received.find("Content-Length: ");
      wanted = at < header_end ? std::stoul(received.substr(at + 16)) : 0;
    }
  }
}

}  // namespace

void Gate::reached(int count) {
  const std::lock_guard lock(mutex_);
  count_ = std::max(count_, count);
  changed_.notify_all();
}

bool Gate::wait_for(int count) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, kWaitLimit, [&] { return count_ >= count || released_; });
}

void Gate::release() {
  const std::lock_guard lock(mutex_);
  released_ = true;
  changed_.notify_all();
}

HttplibServer::HttplibServer(const std::function<void(httplib::Server&)>& routes) {
  routes(server_);
  server_.set_tcp_nodelay(true);
  port_ = server_.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) {
    throw std::runtime_error("httplib could not bind 127.0.0.1");
  }
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() is a no-op before the accept loop runs, so wait for it.
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

HttplibServer::~HttplibServer() {
  server_.stop();
  thread_.join();
}

std::string HttplibServer::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

ScriptedServer::ScriptedServer(std::function<void(int socket)> script) {
  listen_fd_ = bind_loopback(port_);
  if (::listen(listen_fd_, 4) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("listen() failed");
  }
  thread_ = std::thread([this, script = std::move(script)] { serve(script); });
}

ScriptedServer::~ScriptedServer() {
  thread_.join();
  ::close(listen_fd_);
}

void ScriptedServer::serve(const std::function<void(int)>& script) {
  if (!wait_readable(listen_fd_)) {
    return;
  }
  const int fd = ::accept(listen_fd_, nullptr, nullptr);
  if (fd < 0) {
    return;
  }
  read_request(fd);
  script(fd);
  ::close(fd);
}

std::string ScriptedServer::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

bool send_all(int socket, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string chunk(std::string_view payload) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", payload.size());
  return std::string(size) + std::string(payload) + "\r\n";
}

int closed_port() {
  int port = 0;
  ::close(bind_loopback(port));
  return port;
}

}  // namespace kvbench::http::test_support
