#include "harness/gguf/model_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"
#include "harness/gguf/synth.h"

namespace kvbench::gguf {
namespace {

using ::testing::HasSubstr;

ModelShape odd_shape() {
  ModelShape s;
  s.n_layer = 12;
  s.n_head = 6;
  s.n_head_kv = 3;
  s.head_dim_k = s.head_dim_v = s.rope_dims = 96;
  s.n_embd = 96 * 6;
  s.n_ff = 1000;
  s.n_ctx_train = 4096;
  s.n_vocab = 600;
  s.rms_eps = 1e-6F;
  return s;
}

// The metadata of a synthetic model, through bytes and back.
GgufFile reparsed(const GgufFile& f) {
  return parse_header(serialize_header(f)).value();
}

TEST(ModelShape, ReadsBackTheShapeASyntheticModelWasMadeWith) {
  const ModelShape s = odd_shape();
  EXPECT_EQ(shape_from_metadata(reparsed(synthetic_model(s, GgmlType::f16))), s);
  const ModelShape tiny = preset_shape("tiny").value();
  EXPECT_EQ(shape_from_metadata(reparsed(synthetic_model(tiny, GgmlType::f32))), tiny);
}

TEST(ModelShape, Presets) {
  const ModelShape tiny = preset_shape("tiny").value();
  EXPECT_EQ(tiny.n_layer, 2U);
  EXPECT_EQ(tiny.n_embd, 64U);
  EXPECT_EQ(tiny.n_head, 4U);
  EXPECT_EQ(tiny.n_head_kv, 2U);
  EXPECT_EQ(tiny.n_ff, 128U);
  EXPECT_EQ(tiny.head_dim_k, 16U);
  EXPECT_EQ(tiny.n_ctx_train, 32768U);
  EXPECT_EQ(tiny.n_vocab, 512U);
  const ModelShape small = preset_shape("small").value();
  EXPECT_EQ(std::tuple(small.n_layer, small.n_embd, small.n_head, small.n_head_kv, small.n_ff),
            std::tuple(4U, 256U, 4U, 2U, 768U));
  const ModelShape lesson = preset_shape("lesson").value();
  EXPECT_EQ(std::tuple(lesson.n_layer, lesson.n_embd, lesson.n_head, lesson.n_head_kv, lesson.n_ff,
                       lesson.head_dim_k, lesson.rope_dims),
            std::tuple(8U, 512U, 8U, 2U, 1536U, 64U, 64U));
  EXPECT_EQ(preset_shape("huge"), std::nullopt);
  ASSERT_EQ(preset_names().size(), 3U);
  EXPECT_EQ(preset_names()[0], "tiny");
  for (std::string_view name : preset_names()) {
    EXPECT_TRUE(llama_shape_problems(preset_shape(name).value()).empty()) << name;
  }
}

TEST(ModelShape, KvBytesPerToken) {
  // lesson: 8 layers x (K + V) x 2 KV heads x 64 dims; llama-server reports 8.00 MiB for 2048
  // cells at f16, i.e. 4096 bytes per token.
  const ModelShape lesson = preset_shape("lesson").value();
  EXPECT_EQ(kv_bytes_per_token(lesson, GgmlType::f16, GgmlType::f16), 4096U);
  EXPECT_EQ(kv_bytes_per_token(lesson, GgmlType::q8_0, GgmlType::q8_0), 2176U);
  EXPECT_EQ(kv_bytes_per_token(lesson, GgmlType::q8_0, GgmlType::f16), 3136U);
  const ModelShape odd = odd_shape();  // 3 x 96 = 288 = 9 q8_0 blocks
  EXPECT_EQ(kv_bytes_per_token(odd, GgmlType::f16, GgmlType::f16), 12U * 2 * 288 * 2);
  EXPECT_EQ(kv_bytes_per_token(odd, GgmlType::q8_0, GgmlType::q8_0), 12U * 2 * 9 * 34);
  ModelShape narrow = preset_shape("tiny").value();
  narrow.n_head_kv = 1;  // 16 elements: not a whole q8_0 block
  EXPECT_EQ(kv_bytes_per_token(narrow, GgmlType::q8_0, GgmlType::q8_0), std::nullopt);
  EXPECT_EQ(kv_bytes_per_token(narrow, GgmlType::f16, GgmlType::f16), 2U * 2 * 16 * 2);
}

TEST(ModelShape, PerLayerKvHeadsAreKept) {
  GgufFile f = reparsed(synthetic_model(preset_shape("tiny").value(), GgmlType::f16));
  f.set("llama.attention.head_count_kv", Value{Array{std::vector<std::int32_t>{2, 0}}});
  const ModelShape s = shape_from_metadata(f);
  EXPECT_EQ(s.n_head_kv, 2U);
  EXPECT_EQ(s.n_head_kv_layers, (std::vector<std::uint32_t>{2, 0}));
  EXPECT_EQ(n_head_kv_at(s, 0), 2U);
  EXPECT_EQ(n_head_kv_at(s, 1), 0U);
  EXPECT_EQ(kv_bytes_per_token(s, GgmlType::f16, GgmlType::f16), 2U * 32 * 2);

  f.set("llama.attention.head_count_kv", Value{Array{std::vector<std::uint32_t>{2, 2, 2}}});
  EXPECT_THROW(shape_from_metadata(f), InputError);
}

TEST(ModelShape, OptionalKeys) {
  GgufFile f = reparsed(synthetic_model(preset_shape("small").value(), GgmlType::f16));
  f.set("llama.attention.key_length", Value{std::uint32_t{128}});
  f.set("llama.attention.value_length", Value{std::uint32_t{96}});
  f.set("llama.attention.sliding_window", Value{std::uint32_t{4096}});
  const ModelShape s = shape_from_metadata(f);
  EXPECT_EQ(s.head_dim_k, 128U);
  EXPECT_EQ(s.head_dim_v, 96U);
  EXPECT_EQ(s.rope_dims, 64U);  // still the file's rope.dimension_count
  EXPECT_EQ(s.sliding_window, 4096U);
}

std::string shape_error(const GgufFile& f) {
  try {
    shape_from_metadata(f);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelShape, MissingOrMistypedKeysAreNamed) {
  const GgufFile good = reparsed(synthetic_model(preset_shape("tiny").value(), GgmlType::f16));
  for (const char* key : {"llama.block_count", "llama.embedding_length", "llama.context_length"}) {
    GgufFile f = good;
    std::erase_if(f.metadata, [key](const KeyValue& kv) { return kv.key == key; });
    EXPECT_EQ(shape_error(f), std::string("GGUF metadata lacks the key '") + key + "'");
  }
  GgufFile f = good;
  std::erase_if(f.metadata, [](const KeyValue& kv) { return kv.key == "general.architecture"; });
  EXPECT_EQ(shape_error(f), "GGUF metadata lacks the string key 'general.architecture'");
  f = good;
  std::erase_if(f.metadata,
                [](const KeyValue& kv) { return kv.key == "llama.attention.head_count"; });
  EXPECT_THAT(shape_error(f), HasSubstr("llama.attention.head_count"));
  f = good;
  f.set("llama.block_count", Value{std::string("2")});
  EXPECT_EQ(shape_error(f),
            "GGUF key 'llama.block_count' must be an unsigned 32-bit integer, found str");
  f = good;
  f.set("llama.context_length", Value{std::uint64_t{1} << 40});
  EXPECT_THAT(shape_error(f), HasSubstr("llama.context_length"));
}

TEST(ModelShape, VocabularySizeFallsBack) {
  GgufFile f = reparsed(synthetic_model(preset_shape("tiny").value(), GgmlType::f16));
  std::erase_if(f.metadata, [](const KeyValue& kv) { return kv.key == "tokenizer.ggml.tokens"; });
  f.set("llama.vocab_size", Value{std::uint32_t{777}});
  EXPECT_EQ(shape_from_metadata(f).n_vocab, 777U);
  std::erase_if(f.metadata, [](const KeyValue& kv) { return kv.key == "llama.vocab_size"; });
  EXPECT_EQ(shape_from_metadata(f).n_vocab, 512U);  // token_embd.weight's ne[1]
  f.tensors.clear();
  EXPECT_THAT(shape_error(f), HasSubstr("tokenizer.ggml.tokens"));
}

TEST(ModelShape, LlamaShapeProblems) {
  ModelShape s = preset_shape("small").value();
  s.n_embd = 250;
  s.n_head_kv = 3;
  EXPECT_EQ(llama_shape_problems(s),
            (std::vector<std::string>{
                "embedding width 250 is not a multiple of the head count 4",
                "head count 4 is not a multiple of the KV head count 3",
            }));
  s = ModelShape{};
  EXPECT_EQ(llama_shape_problems(s).size(), 7U);
}

TEST(ModelShape, ASyntheticModelNamesItsPreset) {
  EXPECT_EQ(synthetic_preset("synthetic:small"), "small");
  EXPECT_EQ(synthetic_preset("synthetic:"), "");
  EXPECT_EQ(synthetic_preset("/models/synthetic:small.gguf"), std::nullopt);
  EXPECT_EQ(synthetic_preset("llama3:8b"), std::nullopt);
}

}  // namespace
TEST(ModelShape, JsonKeepsEveryFieldRunJsonNeedsPerLayerKvHeadsToo) {
  ModelShape s;
  s.arch = "gemma3";
  s.n_layer = 3;
  s.n_embd = 256;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_head_kv_layers = {2, 1, 2};
  s.n_ff = 1024;
  s.n_ctx_train = 8192;
  s.n_vocab = 512;
  s.head_dim_k = 64;
  s.head_dim_v = 32;
  s.rope_dims = 64;
  s.sliding_window = 1024;
  const nlohmann::json j = s;
  EXPECT_EQ(j["n_head_kv_layers"], (std::vector<std::uint32_t>{2, 1, 2}));
  EXPECT_EQ(j["sliding_window"], 1024);
  EXPECT_FALSE(j.contains("rms_eps"));
  EXPECT_EQ(j.get<ModelShape>(), s);
  ModelShape plain = s;
  plain.n_head_kv_layers.clear();
  plain.sliding_window.reset();
  const nlohmann::json p = plain;
  EXPECT_FALSE(p.contains("n_head_kv_layers"));
  EXPECT_FALSE(p.contains("sliding_window"));
  EXPECT_EQ(p.get<ModelShape>(), plain);
}

TEST(ModelShape, JsonOfAnOlderRunFillsDefaults) {
  const auto s =
      nlohmann::json{{"n_layer", 4}, {"n_head_kv", 4}, {"head_dim_k", 64}}.get<ModelShape>();
  EXPECT_EQ(s.n_layer, 4U);
  EXPECT_EQ(s.head_dim_v, 64U) << "head_dim_v defaults to head_dim_k";
  EXPECT_EQ(s.arch, "llama");
  EXPECT_TRUE(s.n_head_kv_layers.empty());
  EXPECT_FALSE(s.sliding_window);
}

}  // namespace kvbench::gguf
