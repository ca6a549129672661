#pragma once
// Servers on 127.0.0.1 for the CurlTransport tests: a cpp-httplib server on a free port, a raw
// socket server that answers one request with scripted bytes (for broken responses httplib will
// not produce), a port nothing listens on, and a Gate for lockstep streaming.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <httplib.h>

namespace kvbench::http::test_support {

// Counts chunks the client has taken, so a server can send chunk k+1 only after chunk k arrived:
// every chunk then reaches the client on its own, whatever the machine's load.
class Gate {
 public:
  void reached(int count);
  // Waits until reached(n or more) or release(); false after 5 s without either.
  bool wait_for(int count);
  // Unblocks every waiter for good (test teardown).
  void release();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int count_ = 0;
  bool released_ = false;
};

class HttplibServer {
 public:
  // `routes` registers handlers; the server then listens on a free port until destruction.
  explicit HttplibServer(const std::function<void(httplib::Server&)>& routes);
  ~HttplibServer();
  HttplibServer(const HttplibServer&) = delete;
  HttplibServer& operator=(const HttplibServer&) = delete;
  std::string url(std::string_view path) const;

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// Accepts one connection, reads one request (headers and a Content-Length body), runs `script`
// with the socket, then closes it.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<void(int socket)> script);
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;
  std::string url(std::string_view path) const;

 private:
  void serve(const std::function<void(int)>& script);

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// Writes all of `bytes` to `socket`; false if the peer went away.
bool send_all(int socket, std::string_view bytes);

// One HTTP/1.1 chunked-encoding chunk holding `payload`.
std::string chunk(std::string_view payload);

// A loopback port that was free a moment ago and has no listener.
int closed_port();

}  // namespace kvbench::http::test_support
