#pragma once
// Running a scenario on llama-server: every variant's server checked before anything is written
// (binary found, model written or checked, API key read; or an attached server's /health), and
// per block a managed server started with the block's num_ctx x slots, cache type and slots (or
// the attached one reached), /props recorded, a one-token warm-up, memory after load, after the
// longest prompt and at the end, and restarts of a server that died.

#include <memory>
#include <string>
#include <vector>

#include "harness/http/transport.h"
#include "harness/run/runner.h"
#include "harness/run/servers.h"
#include "harness/scenario/scenario.h"
#include "harness/servers/server_target.h"

namespace kvbench::servers {

class LlamaServers final : public run::Servers {
 public:
  LlamaServers(const scenario::Scenario& s, const run::RunOptions& o, http::Transport& transport)
      : s_(s), o_(o), transport_(transport) {}

  run::ServersFound prepare() override;
  std::unique_ptr<run::BlockServer> open(const plan::Block& block,
                                         const std::filesystem::path& run_dir,
                                         results::BlockInfo& info) override;

 private:
  const ServerTarget& target_of(const plan::Block& block) const;

  const scenario::Scenario& s_;
  const run::RunOptions& o_;
  http::Transport& transport_;
  std::vector<ServerTarget> targets_;  // one per variant (or the one server)
};

}  // namespace kvbench::servers
