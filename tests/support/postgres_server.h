#pragma once
// A private PostgreSQL server for tests: Debian's postgresql binaries, a fresh data folder, a free
// loopback port, trust authentication for the user "kvbench", and one database "kvbench". Run as
// root (as CI runs), the server runs as the unprivileged user "postgres" (or "nobody"), started
// through runuser; otherwise as the current user. Stopped and removed on destruction.

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/process/ports.h"
#include "harness/process/run_capture.h"

namespace kvbench::test {

class PostgresServer {
 public:
  // The folder of Debian's initdb and pg_ctl (/usr/lib/postgresql/<major>/bin), if installed.
  static std::optional<std::filesystem::path> bin_dir() {
    const std::filesystem::path root = "/usr/lib/postgresql";
    std::error_code ec;
    std::optional<std::filesystem::path> best;
    for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
      if (std::filesystem::exists(e.path() / "bin" / "initdb") &&
          std::filesystem::exists(e.path() / "bin" / "pg_ctl")) {
        if (!best || e.path() > *best) {
          best = e.path() / "bin";
        }
      }
    }
    return best;
  }

  PostgresServer() {
    const auto bin = bin_dir();
    if (!bin) {
      throw std::runtime_error("no PostgreSQL server: install Debian's postgresql package");
    }
    bin_ = *bin;
    char pattern[] = "/tmp/kvbench-pg-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    root_ = pattern;
    data_ = root_ / "data";
    std::filesystem::create_directory(data_);
    if (::geteuid() == 0) {
      const passwd* pw = ::getpwnam("postgres");
      if (pw == nullptr) {
        pw = ::getpwnam("nobody");
      }
      if (pw == nullptr) {
        throw std::runtime_error("running as root and no unprivileged user to run PostgreSQL");
      }
      user_ = pw->pw_name;
      for (const auto& p : {root_, data_}) {
        if (::chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
          throw std::runtime_error("chown failed: " + p.string());
        }
      }
    }
    port_ = process::find_free_loopback_port();
    run({(bin_ / "initdb").string(), "-D", data_.string(), "-U", "kvbench", "--auth=trust", "-E",
         "UTF8", "--no-sync", "--no-instructions"});
    start();
    run({(bin_ / "createdb").string(), "-h", "127.0.0.1", "-p", std::to_string(port_), "-U",
         "kvbench", "kvbench"});
  }
  ~PostgresServer() {
    try {
      stop("fast");
    } catch (...) {
    }
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& db = "kvbench") const {
    return fmt::format("postgresql://kvbench@127.0.0.1:{}/{}", port_, db);
  }
  const std::string& user() const { return user_; }  // "" when the current user runs it

  void start() {
    run({(bin_ / "pg_ctl").string(), "-D", data_.string(), "-l", (root_ / "log").string(), "-w",
         "-o", fmt::format("-p {} -k {} -c listen_addresses=127.0.0.1", port_, root_.string()),
         "start"});
    running_ = true;
  }
  // mode: "fast" (a clean shutdown) or "immediate" (every server process quits at once, as in a
  // crash: what is not committed is lost).
  void stop(const std::string& mode) {
    if (!running_) {
      return;
    }
    running_ = false;
    run({(bin_ / "pg_ctl").string(), "-D", data_.string(), "-m", mode, "-w", "stop"});
  }
  void create_database(const std::string& name) {
    run({(bin_ / "createdb").string(), "-h", "127.0.0.1", "-p", std::to_string(port_), "-U",
         "kvbench", name});
  }
  // Runs psql's query (-At: unaligned, tuples only) and returns its output.
  std::string psql(const std::string& sql, const std::string& db = "kvbench") const {
    return run({(bin_ / "psql").string(), "-h", "127.0.0.1", "-p", std::to_string(port_), "-U",
                "kvbench", "-d", db, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql});
  }

 private:
  std::string run(std::vector<std::string> argv) const {
    if (!user_.empty()) {
      argv.insert(argv.begin(), {"runuser", "-u", user_, "--"});
    }
    process::SpawnSpec spec;
    spec.argv = argv;
    spec.working_dir = root_;
    const auto r = process::run_capture(spec, std::chrono::seconds(120));
    if (!r.status || !r.status->success()) {
      throw std::runtime_error(
          fmt::format("{} failed: {}{}", argv.back(), r.stdout_text, r.stderr_text));
    }
    return r.stdout_text;
  }

  std::filesystem::path bin_;
  std::filesystem::path root_;
  std::filesystem::path data_;
  std::string user_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace kvbench::test
