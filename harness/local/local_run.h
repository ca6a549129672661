#pragma once
// Runs on this machine: the run's entry points (a scenario, a resume, an extension), the server
// kinds kvbench knows, each its run::Servers, and the run context of real clocks and libcurl
// transports. A server kind is added here by one line in the table of local_run.cpp, beside its
// Backend and its Servers.

#include <filesystem>
#include <memory>
#include <string>

#include "harness/core/clock.h"
#include "harness/http/curl_transport.h"
#include "harness/run/runner.h"
#include "harness/run/servers.h"
#include "harness/scenario/scenario.h"

namespace kvbench::local {

// The servers of `s`'s server kind.
std::unique_ptr<run::Servers> make_servers(const scenario::Scenario& s, const run::RunOptions& o,
                                           http::Transport& transport, const std::string& run_id);

// The run context of this machine: the steady clock, the system clock, libcurl's transports,
// make_servers and the machine's own state and CPU clock.
class LocalRun final : public run::RunContext {
 public:
  LocalRun() : transport_(clock_) {}
  LocalRun(const LocalRun&) = delete;
  LocalRun& operator=(const LocalRun&) = delete;
  run::RunContext& context() { return *this; }

  const Clock& clock() const override { return clock_; }
  const Clock& wall_clock() const override { return wall_clock_; }
  http::Transport& transport() override { return transport_; }
  std::unique_ptr<http::ConcurrentTransport> concurrent_transport() override;
  std::unique_ptr<run::Servers> servers(const scenario::Scenario& s, const run::RunOptions& o,
                                        http::Transport& transport,
                                        const std::string& run_id) override;
  std::optional<measure::MachineState> machine_state() override;
  std::optional<double> cpu_clock() override;

 private:
  SteadyClock clock_;
  SystemClock wall_clock_;
  http::CurlTransport transport_;
};

// precision::run_scenario, resume_run and extend_run (a run continued until precise) in a
// LocalRun.
run::RunSummary run_scenario(const scenario::Scenario& s, const run::RunOptions& options);
run::RunSummary resume_run(const std::filesystem::path& run_dir, const run::RunOptions& options);
run::RunSummary extend_run(const std::filesystem::path& run_dir, int extra_sets,
                           const run::RunOptions& options);

}  // namespace kvbench::local
