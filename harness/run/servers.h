#pragma once
// The seam between the runner and a server kind. A Servers is made once per run: it checks
// the servers before anything is written, says what run.json records of them, and opens one
// BlockServer per block (a managed server started with the block's configuration, or the
// attached one reached). The runner drives only these two interfaces and the Backend a block
// gives it, so it never knows which kind it runs; a new kind is a Backend and its Servers.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/answer.h"
#include "harness/backend/backend.h"
#include "harness/plan/plan.h"
#include "harness/results/manifest.h"

namespace kvbench::run {

// The server of one block, from open() until close().
class BlockServer {
 public:
  BlockServer() = default;
  virtual ~BlockServer() = default;
  BlockServer(const BlockServer&) = delete;
  BlockServer& operator=(const BlockServer&) = delete;

  // Where the block's calls go; valid until restart() or close().
  virtual backend::Backend& backend() = 0;
  // The token ids slot 0 holds before the block's first call (a warm-up request); empty when
  // nothing is known.
  virtual std::vector<int> slot_ids() const { return {}; }
  // After a failed call: whether a server this block started has exited. If so, fills
  // `restart` with how (exit) and when (at); its memory figures are then dropped. A server
  // kvbench did not start (attached), or one the kind cannot restart, never died here.
  virtual bool died(results::ServerRestart& restart) = 0;
  // Starts the server again after died(), once; fills url on success or error. Returns whether
  // it answers again.
  virtual bool restart(results::ServerRestart& restart) = 0;
  // After each call of a sequential block (memory probes).
  virtual void after_call(const plan::PlannedCall& call) = 0;
  // Adds the block's end state to `info` (memory at the end and the like) and stops a managed
  // server.
  virtual void close(results::BlockInfo& info) = 0;
  // The answers experiment (scenario "answers"): greedy answers with their top-k probabilities
  // for `prompts`, from this block's server before close(), or with `second_start` from a fresh
  // start of the same configuration after it (stopped again before this returns; its log is
  // `server-block<N>-answers.log`). Empty where the kind cannot give token ids and probabilities.
  virtual std::vector<backend::Answer> answers(const std::vector<std::string>& /*prompts*/,
                                               const backend::AnswerSpec& /*spec*/,
                                               bool /*second_start*/) {
    return {};
  }
};

// What run.json records of the run's servers.
struct ServersFound {
  nlohmann::json server;  // kind, mode, binary and version, or url
  nlohmann::json model;   // the model's file and shape, or its name
  // One entry per scenario variant, in order: what preparing that variant's server found
  // ({"server": .., "model": ..}); empty without variants.
  std::vector<nlohmann::json> variants_found;
};

class Servers {
 public:
  Servers() = default;
  virtual ~Servers() = default;
  Servers(const Servers&) = delete;
  Servers& operator=(const Servers&) = delete;

  // Checks every server the run needs before anything is written. Throws InputError for bad
  // input (no binary, a missing model, an unset API key variable) and Error for a server that
  // does not answer.
  virtual ServersFound prepare() = 0;
  // Starts or reaches the server for `block` and adds what it learned to `info` (url, argv,
  // log, props, memory after load, ...); a managed server's log goes into `run_dir`. Throws
  // Error when the server does not start or answer; `info` keeps what was learned by then.
  virtual std::unique_ptr<BlockServer> open(const plan::Block& block,
                                            const std::filesystem::path& run_dir,
                                            results::BlockInfo& info) = 0;
};

}  // namespace kvbench::run
