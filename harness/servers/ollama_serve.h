#pragma once
// `ollama serve` as a managed server: one per block, on a free loopback port, with the KV cache
// type and the parallel calls of the block in its environment (server-wide settings in Ollama).

#include <filesystem>
#include <string>

#include "harness/servers/managed_server.h"

namespace kvbench::servers {

struct OllamaServeConfig {
  std::string binary;  // the ollama executable (or a stand-in that accepts `serve`)
  std::string cache_type = "f16";
  bool flash_attn = true;  // OLLAMA_FLASH_ATTENTION=1 (0 when the scenario says "off")
  std::filesystem::path log_path;
  int num_parallel = 1;  // OLLAMA_NUM_PARALLEL: calls served at once, each with the whole num_ctx
};

// The launch of `<binary> serve` on 127.0.0.1:`port`: OLLAMA_HOST, OLLAMA_KV_CACHE_TYPE,
// OLLAMA_FLASH_ATTENTION, OLLAMA_NUM_PARALLEL=num_parallel and OLLAMA_MAX_LOADED_MODELS=1 set;
// the rest of the environment (OLLAMA_MODELS, HOME: the user's model store) inherited. Ready
// when GET /api/version answers. Pure.
ProcessLaunch ollama_serve_launch(const OllamaServeConfig& config, int port);

}  // namespace kvbench::servers
