#pragma once
// A scenario: what to run, against which server, how often. Parsed from JSON with comments and
// validated as a whole; every problem is reported with its path.

#include <any>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/cache_level.h"
#include "harness/scenario/concurrency.h"
#include "harness/scenario/edit_position.h"
#include "harness/scenario/gate_config.h"

namespace kvbench::scenario {

// llama-server's native API, Ollama's, an OpenAI-compatible API (/v1/chat/completions or
// /v1/completions) or Anthropic's Messages API (/v1/messages). Without a url, the last two are
// served by a managed llama-server through its own OpenAI- and Anthropic-style endpoints.
enum class ServerKind { llama_server, ollama, openai, anthropic };
std::string_view to_string(ServerKind kind);
// Kinds a managed llama-server serves (every kind but Ollama).
bool served_by_llama_server(ServerKind kind);

// The KV-cache types llama.cpp accepts for -ctk/-ctv.
const std::vector<std::string>& known_cache_types();

// How an attached server caches prompts, as its provider documents it: nothing below
// `min_tokens`, and above it whole steps of `step` tokens (OpenAI: 1,024 and 128; vLLM: its
// block size, e.g. 0 and 16). The predicted reuse of a call is the shared prefix in those units.
struct CacheRule {
  int min_tokens = 0;
  int step = 1;
  bool stated() const { return min_tokens > 0 || step > 1; }
  // The tokens cached of `shared` tokens the prompt shares with an earlier one.
  int apply(int shared) const {
    return shared < min_tokens || shared <= 0 ? 0
                                              : min_tokens + (shared - min_tokens) / step * step;
  }
};

struct ServerSpec {
  ServerKind kind = ServerKind::llama_server;
  std::string model = "synthetic:small";  // "synthetic:<preset>" or a GGUF path (managed)
  std::string url;                        // non-empty: attached to a running server
  std::string binary;                     // managed: server executable; empty = search
  std::vector<std::string> args;          // extra server arguments, passed verbatim
  int threads = 0;                        // managed: -t; 0 = server default
  std::string flash_attn = "auto";        // managed: -fa on|off|auto
  // Layers on the GPU: llama-server's -ngl (managed), Ollama's num_gpu (per request); -1: the
  // server's own default.
  int gpu_layers = -1;
  // The batch a step of the server fills with waiting prompt tokens, and its micro-batch:
  // llama-server's --batch-size and --ubatch-size (managed), Ollama's num_batch (per request; it
  // has no micro-batch); absent: the server's own (llama-server caps the micro-batch at the
  // batch). factors.batch_size and factors.ubatch_size vary them by block instead.
  std::optional<int> batch_size;
  std::optional<int> ubatch_size;
  std::string api_key_env;        // name of the environment variable with the key
  std::string endpoint = "chat";  // openai: "chat" or "completions"
  // anthropic: "end" marks the user message with cache_control {"type": "ephemeral"}, so the
  // server may cache the prompt; "none" sends no breakpoint (nothing is cached).
  std::string cache_breakpoint = "none";
  CacheRule cache_rule;  // attached only; a managed llama-server caches every shared token
  // The scenario named server.kind (not recorded: without it an attached server's kind is asked).
  bool kind_stated = false;
  bool managed() const { return url.empty(); }
};

// One server variant of an A/B (or A/B/C...) comparison: the scenario's server with some fields
// replaced. The first variant is the baseline unless gate.baseline names another.
struct Variant {
  std::string name;
  ServerSpec server;  // the scenario's server with this variant's overrides applied
};

// A level of factors.cache_type: both halves ("q8_0") or K and V apart ("q8_0/f16").
using kvbench::cache_halves;
using kvbench::cache_level;
using kvbench::CacheHalves;

struct Factors {
  std::vector<int> prompt_tokens;
  std::vector<int> num_ctx;
  // The KV cache's levels: as given (cache_type, both halves), or crossed from cache_type_k and
  // cache_type_v (each level's halves in cache_halves), K the outer loop.
  std::vector<std::string> cache_type;
  std::vector<std::string> cache_type_k;    // given apart: the K halves' levels, else empty
  std::vector<std::string> cache_type_v;    // given apart: the V halves' levels, else empty
  std::vector<EditPosition> edit_position;  // non-empty: every trial is a cold/edited pair
  // Server batch sizes by block (server.batch_size gives one for all); empty: not a factor.
  std::vector<int> batch_size;
  std::vector<int> ubatch_size;
};

// Drift probes: a fixed reference call at the start of each block, after every `every` timed
// calls, and at the end of the block. every == 0: no probes.
struct Probes {
  int every = 0;
  int prompt_tokens = 256;
};

// Precision on demand: after the planned calls, more sets of blocks (each server configuration
// once more, its rounds shuffled afresh) run until the CI of `effect` in `metric`'s headline model
// is narrower than ± half_width of its estimate, or `max_calls` calls have run.
struct Precision {
  std::string metric;                     // ttft_ms, server_prompt_ms, decode_tps, ...
  std::string effect = "prompt_ktokens";  // a headline term: prompt_ktokens, num_ctx_k, ...
  double half_width = 0.0;                // relative: 0.02 is ±2 % of the estimate; 0: off
  int max_calls = 0;
  bool active() const { return half_width > 0; }
};

// Does the cache type change the answers? The same `prompts` prompts (of `prompt_tokens` tokens
// each, the same text in every block) sent greedily once to each block's server after its calls,
// their `tokens` generated ids and top-`top_k` probabilities recorded; the `reference` type's
// blocks send them again to a second start of their server (the determinism control).
struct Answers {
  int prompts = 0;  // 0: off
  int prompt_tokens = 256;
  int tokens = 64;
  int top_k = 10;
  std::string reference = "f16";
  // "file": the user's own prompts (a JSON array of strings, the path relative to the scenario
  // file), sent as they are instead of generated ones; `prompts` is then their number.
  std::string file;
  std::vector<std::string> texts;
  bool active() const { return prompts > 0; }
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // file the scenario came from (for messages)
  ServerSpec server;
  Factors factors;
  int repeats = 5;        // rounds per block: each prompt length once per round
  int block_repeats = 1;  // how often each server configuration is started
  std::uint64_t seed = 42;
  int max_tokens = 32;
  int warmup = 1;                 // discarded calls at the start of each block
  double timeout_s = 600;         // per call
  bool unique_first_line = true;  // false only to demonstrate the prompt-cache trap
  Probes probes;
  Concurrency concurrency;        // calls in flight at once; one by default
  std::vector<Variant> variants;  // empty: one server, no comparison
  GateConfig gate;
  Precision precision;
  Answers answers;
  // What the scenario sends: one workload, held here by value without this module knowing the
  // workloads (workloads/workload.h holds their table; workloads/scenario_workload.h reads it:
  // workloads::of(s)). Empty means the first, the prompt sweep.
  std::any workload;
  nlohmann::json resolved;  // the scenario with every default filled in
};

// Parses and validates scenario text (JSON, comments allowed). `source` names the file in
// messages. Throws InputError listing every problem ("<source>: factors.num_ctx[1]: ...").
Scenario parse_scenario(std::string_view text, const std::string& source);

// The JSON of a scenario's text (comments allowed); InputError naming `source` when it is none.
nlohmann::json parse_scenario_json(std::string_view text, const std::string& source);

// A scenario from its parsed document; `text` (may be empty) gives messages their line numbers.
Scenario parse_scenario(const nlohmann::json& doc, std::string_view text,
                        const std::string& source);

// Reads a scenario file; a missing or unreadable file is an InputError.
Scenario load_scenario(const std::string& path);

// The text of a scenario file (or "-": standard input): at most 1 MiB of valid UTF-8, else an
// InputError naming the file.
std::string read_scenario_text(const std::string& path);

struct ScenarioEdits;
// The file's scenario with command-line edits (edits.h) applied before it is parsed; messages
// name the file and the flags ("quickstart.json with --num-ctx: factors.num_ctx[0]: ...").
Scenario load_scenario(const std::string& path, const ScenarioEdits& edits);

// The scenario as JSON with every default made explicit (what run.json records).
nlohmann::json to_json(const Scenario& s);

// The scenario a run's run.json records (its resolved form), read back typed for a report: every
// setting as a scenario file gives it, without reading the files it names and without the checks
// a scenario file gets; a setting that does not parse keeps its default, as one an earlier
// version did not record.
Scenario recorded_scenario(const nlohmann::json& resolved);

}  // namespace kvbench::scenario
