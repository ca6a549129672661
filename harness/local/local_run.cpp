#include "harness/local/local_run.h"

#include <functional>
#include <map>

#include "harness/http/multi_transport.h"
#include "harness/precision/precision.h"
#include "harness/servers/compat_servers.h"
#include "harness/servers/llama_servers.h"
#include "harness/servers/ollama_servers.h"

namespace kvbench::local {

namespace {

using servers::CompatServers;
using servers::LlamaServers;
using servers::OllamaServers;

using MakeServers = std::function<std::unique_ptr<run::Servers>(
    const scenario::Scenario&, const run::RunOptions&, http::Transport&, const std::string&)>;

// OpenAI- and Anthropic-compatible kinds: a managed llama-server serves them, else the attached
// server's own Servers.
std::unique_ptr<run::Servers> compat_or_managed(const scenario::Scenario& s,
                                                const run::RunOptions& o, http::Transport& t,
                                                const std::string& run_id) {
  if (s.server.managed()) {
    return std::make_unique<LlamaServers>(s, o, t);
  }
  return std::make_unique<CompatServers>(s, t, run_id);
}

const std::map<scenario::ServerKind, MakeServers>& kind_servers() {
  static const std::map<scenario::ServerKind, MakeServers> table = {
      {scenario::ServerKind::llama_server,
       [](const scenario::Scenario& s, const run::RunOptions& o, http::Transport& t,
          const std::string&) { return std::make_unique<LlamaServers>(s, o, t); }},
      {scenario::ServerKind::ollama,
       [](const scenario::Scenario& s, const run::RunOptions& o, http::Transport& t,
          const std::string& run_id) {
         return std::make_unique<OllamaServers>(s, t, run_id, o.ready_timeout);
       }},
      {scenario::ServerKind::openai, compat_or_managed},
      {scenario::ServerKind::anthropic, compat_or_managed},
  };
  return table;
}

}  // namespace

std::unique_ptr<run::Servers> make_servers(const scenario::Scenario& s, const run::RunOptions& o,
                                           http::Transport& transport, const std::string& run_id) {
  return kind_servers().at(s.server.kind)(s, o, transport, run_id);
}

std::unique_ptr<http::ConcurrentTransport> LocalRun::concurrent_transport() {
  return std::make_unique<http::MultiTransport>(clock_);
}

std::unique_ptr<run::Servers> LocalRun::servers(const scenario::Scenario& s,
                                                const run::RunOptions& o,
                                                http::Transport& transport,
                                                const std::string& run_id) {
  return make_servers(s, o, transport, run_id);
}

std::optional<measure::MachineState> LocalRun::machine_state() {
  return measure::read_machine_state();
}

std::optional<double> LocalRun::cpu_clock() {
  return measure::read_cpu_clock_mhz();
}

run::RunSummary run_scenario(const scenario::Scenario& s, const run::RunOptions& options) {
  LocalRun local;
  return precision::run_scenario(s, options, local.context());
}

run::RunSummary resume_run(const std::filesystem::path& run_dir, const run::RunOptions& options) {
  LocalRun local;
  return precision::resume_run(run_dir, options, local.context());
}

run::RunSummary extend_run(const std::filesystem::path& run_dir, int extra_sets,
                           const run::RunOptions& options) {
  LocalRun local;
  return precision::extend_run(run_dir, extra_sets, options, local.context());
}

}  // namespace kvbench::local
