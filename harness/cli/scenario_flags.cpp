#include "harness/cli/scenario_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/data_files.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"

namespace kvbench::cli {

namespace {

template <typename T>
void add_number(CLI::App* cmd, const char* flag, std::optional<T>& target, const char* help) {
  cmd->add_option_function<T>(
         flag, [&target](const T& v) { target = v; }, help)
      ->type_name("N");
}

}  // namespace

void add_scenario_flags(CLI::App* cmd, scenario::ScenarioEdits& e) {
  const char* group = "Scenario fields (edit the file, or the quick start without one)";
  cmd->add_option("--prompt-tokens", e.prompt_tokens, "Prompt lengths, e.g. 256,1024,4096")
      ->delimiter(',')
      ->type_name("N,...")
      ->group(group);
  cmd->add_option("--num-ctx", e.num_ctx, "Context windows, e.g. 4096,8192")
      ->delimiter(',')
      ->type_name("N,...")
      ->group(group);
  cmd->add_option("--batch-size", e.batch_size,
                  "Server batch sizes (llama-server's --batch-size, Ollama's num_batch), e.g. "
                  "512,2048")
      ->delimiter(',')
      ->type_name("N,...")
      ->group(group);
  cmd->add_option("--ubatch-size", e.ubatch_size,
                  "Server micro-batch sizes (llama-server's --ubatch-size), e.g. 128,512")
      ->delimiter(',')
      ->type_name("N,...")
      ->group(group);
  cmd->add_option("--cache-type", e.cache_type, "KV cache types (K and V alike), e.g. f16,q8_0")
      ->delimiter(',')
      ->type_name("TYPE,...")
      ->group(group);
  cmd->add_option("--cache-type-k", e.cache_type_k,
                  "K cache types, crossed with --cache-type-v, e.g. f16,q8_0")
      ->delimiter(',')
      ->type_name("TYPE,...")
      ->group(group);
  cmd->add_option("--cache-type-v", e.cache_type_v,
                  "V cache types, crossed with --cache-type-k, e.g. f16,q8_0")
      ->delimiter(',')
      ->type_name("TYPE,...")
      ->group(group);
  cmd->add_option("--edit-position", e.edit_position,
                  "Where an edit falls in a resent prompt, e.g. 0.25,0.5,none")
      ->delimiter(',')
      ->type_name("F,...")
      ->group(group);
  add_number(cmd, "--repeats", e.repeats, "Rounds of every prompt length per server start");
  add_number(cmd, "--block-repeats", e.block_repeats, "Server starts per setting");
  add_number(cmd, "--max-tokens", e.max_tokens, "Tokens decoded per call");
  add_number(cmd, "--seed", e.seed, "Seed of the shuffle and the prompts");
  add_number(cmd, "--threads", e.threads, "Threads of a managed server");
  add_number(cmd, "--gpu-layers", e.gpu_layers,
             "Layers on the GPU (llama-server's -ngl, Ollama's num_gpu)");
  for (const char* flag :
       {"--repeats", "--block-repeats", "--max-tokens", "--seed", "--threads", "--gpu-layers"}) {
    cmd->get_option(flag)->group(group);
  }
  cmd->add_option("--flash-attn", e.flash_attn, "Flash attention of the server: on, off or auto")
      ->type_name("on|off|auto")
      ->group(group);
  cmd->add_option("--kind", e.kind, "Server kind (llama-server, ollama, openai, anthropic, ...)")
      ->type_name("KIND")
      ->group(group);
  cmd->add_option("--name", e.name, "The scenario's name")->type_name("NAME")->group(group);
  cmd->add_option("--set", e.sets,
                  "Any other scenario field, e.g. answers.prompts=8 (VALUE read as JSON where it "
                  "parses, else as a string; repeatable, applied last)")
      ->type_name("PATH=VALUE")
      ->group(group);
}

scenario::Scenario scenario_with_flags(const std::string& arg, const scenario::ScenarioEdits& e,
                                       bool attached, const std::string& model) {
  if (!arg.empty()) {
    return scenario::load_scenario(scenario_argument(arg), e);
  }
  const std::string path = scenario_argument("quickstart");
  auto doc = scenario::parse_scenario_json(scenario::read_scenario_text(path), path);
  doc["name"] = e.made_name();
  if (!model.empty()) {
    doc["server"]["model"] = model;
  }
  if (attached) {
    // One start: its rounds run in one block.
    doc["repeats"] = doc.value("repeats", 1) * doc.value("block_repeats", 1);
    doc["block_repeats"] = 1;
  }
  doc = scenario::apply_edits(std::move(doc), e);
  const auto flags = e.flags();
  return scenario::parse_scenario(
      doc, "",
      flags.empty() ? "the quick start"
                    : fmt::format("the quick start with {}", fmt::join(flags, ", ")));
}

scenario::ScenarioEdits edits_with_models(scenario::ScenarioEdits e,
                                          const std::vector<std::string>& models) {
  if (models.size() > 1) {
    e.models = models;
  }
  return e;
}

bool sets_field(const scenario::ScenarioEdits& e, std::string_view path) {
  for (const auto& s : e.sets) {
    if (s.starts_with(path) && s.size() > path.size() && s[path.size()] == '=') {
      return true;
    }
  }
  return false;
}

bool kind_stated(const std::string& arg, const scenario::ScenarioEdits& e,
                 const scenario::Scenario& s) {
  return !e.kind.empty() || sets_field(e, "server.kind") || (!arg.empty() && s.server.kind_stated);
}

void write_scenario_out(const std::string& path, const scenario::Scenario& s) {
  AtomicFileWriter out(path);
  out.write(s.resolved.dump(2) + "\n");
  out.commit();
}

}  // namespace kvbench::cli
