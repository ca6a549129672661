// Command-line edits of a scenario: each flag lands on the field a file would give, --set reaches
// any field and comes last, and the edited document is validated as a file is, with messages
// naming the flags.

#include "harness/scenario/edits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/plan/plan.h"
#include "harness/scenario/scenario.h"

namespace kvbench::scenario {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

const json kFile = json::parse(R"({"name": "x", "factors": {"prompt_tokens": [256],
  "num_ctx": [2048]}, "server": {"model": "synthetic:tiny"}, "repeats": 3})");

TEST(ScenarioEdits, NamedFlagsReplaceTheFilesFields) {
  ScenarioEdits e;
  e.prompt_tokens = {256, 1024};
  e.num_ctx = {4096, 8192};
  e.cache_type = {"f16", "q8_0"};
  e.edit_position = {"0.25", "none"};
  e.repeats = 2;
  e.block_repeats = 4;
  e.max_tokens = 32;
  e.seed = 9;
  e.threads = 1;
  e.flash_attn = "on";
  e.name = "mine";
  const json d = apply_edits(kFile, e);
  EXPECT_EQ(d["factors"]["prompt_tokens"], json::parse("[256, 1024]"));
  EXPECT_EQ(d["factors"]["num_ctx"], json::parse("[4096, 8192]"));
  EXPECT_EQ(d["factors"]["cache_type"], json::parse(R"(["f16", "q8_0"])"));
  EXPECT_EQ(d["factors"]["edit_position"], json::parse(R"([0.25, "none"])"));
  EXPECT_EQ(d["repeats"], 2);
  EXPECT_EQ(d["block_repeats"], 4);
  EXPECT_EQ(d["max_tokens"], 32);
  EXPECT_EQ(d["seed"], 9);
  EXPECT_EQ(d["server"]["threads"], 1);
  EXPECT_EQ(d["server"]["flash_attn"], "on");
  EXPECT_EQ(d["server"]["model"], "synthetic:tiny") << "fields no flag names are kept";
  EXPECT_EQ(d["name"], "mine");
  EXPECT_EQ(e.flags().size(), 11U);
  EXPECT_EQ(e.flags().front(), "--prompt-tokens");
}

TEST(ScenarioEdits, SetReachesAnyFieldLastAndReadsJsonWhereItParses) {
  ScenarioEdits e;
  e.repeats = 2;
  e.sets = {"repeats=7", "answers.prompts=8", "server.args[0]=--mlock", "description=a b",
            "probes={\"every\": 4}"};
  const json d = apply_edits(kFile, e);
  EXPECT_EQ(d["repeats"], 7) << "--set applies after the named flags";
  EXPECT_EQ(d["answers"]["prompts"], 8) << "objects on the path are made";
  EXPECT_EQ(d["server"]["args"], json::parse(R"(["--mlock"])"));
  EXPECT_EQ(d["description"], "a b") << "not JSON: a string";
  EXPECT_EQ(d["probes"]["every"], 4);
  EXPECT_EQ(e.flags().back(), "--set probes");
}

TEST(ScenarioEdits, MalformedSetNamesTheFlag) {
  const auto error = [](const std::string& set) {
    ScenarioEdits e;
    e.sets = {set};
    try {
      apply_edits(kFile, e);
    } catch (const InputError& err) {
      EXPECT_EQ(err.exit_code(), 2);
      return std::string(err.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error("repeats"), HasSubstr("--set 'repeats': expected PATH=VALUE"));
  EXPECT_THAT(error("=3"), HasSubstr("expected PATH=VALUE with PATH dotted keys"));
  EXPECT_THAT(error("a..b=3"), HasSubstr("PATH dotted keys"));
  EXPECT_THAT(error("server.args[x]=1"), HasSubstr("an index is written [N]"));
  EXPECT_THAT(error("name[0]=1"), HasSubstr("an index [N] into a field that is not an array"));
  EXPECT_THAT(error("server.args[3]=1"), HasSubstr("index 3 is past the end of an array of 0"));
  EXPECT_THAT(error("factors.num_ctx[5]=1"), HasSubstr("index 5 is past the end of an array of 1"));
  EXPECT_THAT(error("repeats.x=1"), HasSubstr("'x' is inside a field that is not an object"));
}

// The edited document goes through the parser: a bad value is refused as in a file, the
// message naming the file and the flags instead of a line.
TEST(ScenarioEdits, EditedFieldsAreValidatedAsAFilesAre) {
  ScenarioEdits e;
  e.num_ctx = {100};
  e.sets = {"repeats=0"};
  try {
    parse_scenario(apply_edits(kFile, e), "", "s.json with --num-ctx, --set repeats");
    ADD_FAILURE() << "accepted num_ctx 100 and repeats 0";
  } catch (const InputError& err) {
    EXPECT_THAT(err.what(), HasSubstr("s.json with --num-ctx, --set repeats: factors.num_ctx"));
    EXPECT_THAT(err.what(), HasSubstr("s.json with --num-ctx, --set repeats: repeats:"));
  }
}

// A one-liner and the file its resolved scenario makes: the same resolved scenario and plan.
TEST(ScenarioEdits, TheResolvedScenarioRunsTheSamePlanAsAFile) {
  ScenarioEdits e;
  e.prompt_tokens = {256, 1024};
  e.cache_type = {"f16", "q8_0"};
  e.seed = 3;
  const auto edited = parse_scenario(apply_edits(kFile, e), "", "s.json with flags");
  const auto file = parse_scenario(edited.resolved.dump(2), "out.json");
  EXPECT_EQ(file.resolved, edited.resolved);
  EXPECT_EQ(plan::to_json(plan::make_plan(file)), plan::to_json(plan::make_plan(edited)));
}

TEST(ScenarioEdits, ANameMadeFromTheFlags) {
  ScenarioEdits e;
  EXPECT_EQ(e.made_name(), "kvbench-flags");
  EXPECT_FALSE(e.any());
  e.prompt_tokens = {256, 8192};
  e.cache_type = {"q8_0"};
  EXPECT_EQ(e.made_name(), "kvbench-p256-8192-q8_0");
  EXPECT_TRUE(e.any());
}

// --model given twice or more: one variant per model, named by it, the first the baseline, its
// blocks interleaved as any variants' are.
TEST(ScenarioEdits, TwoModelsAreTwoVariants) {
  ScenarioEdits e;
  e.models = {"/m/tiny.gguf", "synthetic:small", "/other/tiny.gguf", "llama3.2:1b"};
  EXPECT_EQ(model_variant_names(e.models),
            (std::vector<std::string>{"tiny", "small", "tiny-2", "llama3.2-1b"}));
  EXPECT_EQ(e.flags(), std::vector<std::string>{"--model"});
  e.models = {"/m/tiny.gguf", "synthetic:small"};
  e.prompt_tokens = {256};
  EXPECT_EQ(e.made_name(), "kvbench-p256-tiny-vs-small");
  const auto s = parse_scenario(apply_edits(kFile, e), "", "s.json with --model");
  ASSERT_EQ(s.variants.size(), 2U);
  EXPECT_EQ(s.variants[0].name, "tiny");
  EXPECT_EQ(s.variants[0].server.model, "/m/tiny.gguf");
  EXPECT_EQ(s.variants[1].server.model, "synthetic:small");
  EXPECT_EQ(s.gate.baseline, "tiny");
  const auto p = plan::make_plan(s);
  std::vector<std::string> order;
  for (const auto& b : p.blocks) {
    order.push_back(b.config.variant);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"tiny", "small", "small", "tiny"}))
      << "counterbalanced, as variants are";
  // A scenario with variants of its own keeps them: two models are refused.
  json with_variants = kFile;
  with_variants["variants"] = json::parse(R"([{"name": "a"}, {"name": "b"}])");
  try {
    apply_edits(with_variants, e);
    FAIL() << "expected InputError";
  } catch (const InputError& err) {
    EXPECT_THAT(err.what(), HasSubstr("--model given 2 times makes one variant per model, but the "
                                      "scenario has variants of its own"));
  }
}

// --gpu-layers: llama-server's -ngl when kvbench starts it, Ollama's num_gpu per request; written
// into the resolved scenario only where it is set, so older scenarios keep their hash.
TEST(ScenarioEdits, GpuLayersIsSetWhereTheServerTakesIt) {
  ScenarioEdits e;
  e.gpu_layers = 99;
  EXPECT_EQ(e.flags(), std::vector<std::string>{"--gpu-layers"});
  const auto s = parse_scenario(apply_edits(kFile, e), "", "s.json with --gpu-layers");
  EXPECT_EQ(s.server.gpu_layers, 99);
  EXPECT_EQ(s.resolved["server"]["gpu_layers"], 99);
  EXPECT_FALSE(parse_scenario(kFile.dump(), "x.json").resolved["server"].contains("gpu_layers"));
  const auto refused = [](const std::string& server) {
    try {
      parse_scenario(
          R"({"name": "g", "factors": {"prompt_tokens": [256]}, "server": )" + server + "}",
          "g.json");
    } catch (const InputError& err) {
      return std::string(err.what());
    }
    return std::string();
  };
  EXPECT_THAT(refused(R"({"gpu_layers": 10, "args": ["-ngl", "20"]})"),
              HasSubstr("server.gpu_layers: given twice: as gpu_layers and as '-ngl' in args"));
  EXPECT_THAT(refused(R"({"gpu_layers": 10, "url": "http://127.0.0.1:8080"})"),
              HasSubstr("server.gpu_layers: an attached server (url) placed its layers"));
  EXPECT_EQ(refused(R"({"kind": "ollama", "model": "qwen3:0.6b", "gpu_layers": 10,
    "url": "http://127.0.0.1:11434"})"),
            "")
      << "Ollama takes num_gpu per request";
}

// K and V apart, as llama-bench's -ctk and -ctv: crossed, K the outer loop; a pair of one type
// keeps its one name, so older scenarios, records and effects read as before.
TEST(ScenarioEdits, CacheTypesKAndVApartAreCrossed) {
  ScenarioEdits e;
  e.cache_type_k = {"f16", "q8_0"};
  e.cache_type_v = {"f16", "q8_0"};
  const auto s = parse_scenario(apply_edits(kFile, e), "", "s.json with flags");
  EXPECT_EQ(s.factors.cache_type,
            (std::vector<std::string>{"f16", "f16/q8_0", "q8_0/f16", "q8_0"}));
  EXPECT_FALSE(s.resolved["factors"].contains("cache_type"));
  EXPECT_EQ(s.resolved["factors"]["cache_type_k"], json::parse(R"(["f16", "q8_0"])"));
  EXPECT_EQ(parse_scenario(s.resolved.dump(), "out.json").factors.cache_type, s.factors.cache_type)
      << "the resolved scenario reads back to the same pairs";
  EXPECT_EQ(e.made_name(), "kvbench-kf16-q8_0-vf16-q8_0");
  // With a file, one half given keeps the file's levels for the other.
  json file = kFile;
  file["factors"]["cache_type"] = json::parse(R"(["f16", "q8_0"])");
  ScenarioEdits k_only;
  k_only.cache_type_k = {"q8_0"};
  const auto d = apply_edits(file, k_only);
  EXPECT_EQ(d["factors"]["cache_type_v"], json::parse(R"(["f16", "q8_0"])"));
  EXPECT_EQ(parse_scenario(d, "", "s").factors.cache_type,
            (std::vector<std::string>{"q8_0/f16", "q8_0"}));
  // --cache-type is both halves: beside either half, exit 2.
  ScenarioEdits both = k_only;
  both.cache_type = {"f16"};
  EXPECT_THROW(apply_edits(file, both), InputError);
  const auto refused = [](const std::string& text) {
    try {
      parse_scenario(text, "c.json");
    } catch (const InputError& err) {
      return std::string(err.what());
    }
    return std::string();
  };
  EXPECT_THAT(refused(R"({"name": "c", "factors": {"prompt_tokens": [256], "cache_type": ["f16"],
    "cache_type_k": ["q8_0"]}})"),
              HasSubstr("factors.cache_type: give cache_type (both halves alike) or cache_type_k "
                        "and cache_type_v, not both"));
  EXPECT_THAT(refused(R"({"name": "c", "server": {"kind": "ollama", "model": "qwen3:0.6b"},
    "factors": {"prompt_tokens": [256], "cache_type_k": ["q8_0"], "cache_type_v": ["f16"]}})"),
              HasSubstr("Ollama sets one cache type for K and V (OLLAMA_KV_CACHE_TYPE): the pair "
                        "q8_0/f16"));
  EXPECT_THAT(
      refused(R"({"name": "c", "server": {"flash_attn": "off"},
    "factors": {"prompt_tokens": [256], "cache_type_k": ["f16"], "cache_type_v": ["q8_0"]}})"),
      HasSubstr("factors.cache_type_v: a quantized V cache ('q8_0') needs flash attention"));
  EXPECT_EQ(refused(R"({"name": "c", "server": {"flash_attn": "off"},
    "factors": {"prompt_tokens": [256], "cache_type_k": ["q8_0"], "cache_type_v": ["f16"]}})"),
            "")
      << "quantized keys alone need no flash attention";
  // The answers' reference may be a pair.
  const auto answers = parse_scenario(
      R"({"name": "c", "factors": {"prompt_tokens": [256], "cache_type_k": ["f16", "q8_0"]},
      "answers": {"prompts": 2, "reference": {"k": "q8_0"}}})",
      "c.json");
  EXPECT_EQ(answers.answers.reference, "q8_0/f16");
  EXPECT_EQ(answers.resolved["answers"]["reference"], json::parse(R"({"k": "q8_0", "v": "f16"})"));
}

}  // namespace
}  // namespace kvbench::scenario
