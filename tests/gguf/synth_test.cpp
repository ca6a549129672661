#include "harness/gguf/synth.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {
namespace {

using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("kvbench-gguf-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

Bytes read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

float half_to_float(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
                             : std::ldexp(static_cast<float>(mant + 1024), exp - 25);
  return (h & 0x8000) != 0 ? -mag : mag;
}

TEST(FloatToHalf, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half(0.0F), 0x0000);
  EXPECT_EQ(float_to_half(-0.0F), 0x8000);
  EXPECT_EQ(float_to_half(1.0F), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0F), 0xC000);
  EXPECT_EQ(float_to_half(0.1F), 0x2E66);
  EXPECT_EQ(float_to_half(65504.0F), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0F), 0x7C00);  // halfway to the next power: rounds to infinity
  EXPECT_EQ(float_to_half(1e10F), 0x7C00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -25)), 0x0000);  // halfway: ties to even (0)
  EXPECT_EQ(float_to_half(std::ldexp(1.5F, -25)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -14)), 0x0400);             // smallest normal
  EXPECT_EQ(float_to_half(1.0F + std::ldexp(1.0F, -11)), 0x3C00);      // tie, even stays
  EXPECT_EQ(float_to_half(1.0F + 3 * std::ldexp(1.0F, -11)), 0x3C02);  // tie, odd rounds up
  EXPECT_EQ(float_to_half(INFINITY), 0x7C00);
  EXPECT_EQ(float_to_half(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(float_to_half(NAN) & 0x3FF, 0);
}

TEST(SyntheticVocab, StartsWithSpecialsAndBytes) {
  const SyntheticVocab v = synthetic_vocab(kPresetVocabSize);
  ASSERT_EQ(v.tokens.size(), 512U);
  ASSERT_EQ(v.scores.size(), 512U);
  ASSERT_EQ(v.types.size(), 512U);
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.types[0], 2);
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[2], "</s>");
  EXPECT_EQ(v.types[2], 3);
  EXPECT_EQ(v.tokens[3], "<0x00>");
  EXPECT_EQ(v.tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(v.tokens[258], "<0xFF>");
  EXPECT_EQ(v.types[258], 6);
  EXPECT_EQ(v.tokens[259], "\xE2\x96\x81th");
  EXPECT_EQ(v.types[259], 1);
  EXPECT_EQ(synthetic_vocab_base_size(), 502U);
  EXPECT_EQ(v.tokens[502], "<unused_0>");
  EXPECT_EQ(v.types[511], 5);
  EXPECT_EQ(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), 512U);
  EXPECT_THROW(synthetic_vocab(501), InputError);
}

TEST(SyntheticModel, HasTheMetadataLlamaCppNeeds) {
  const GgufFile f = synthetic_model(preset_shape("tiny").value(), GgmlType::f16);
  EXPECT_EQ(*f.find("general.architecture"), Value{std::string("llama")});
  EXPECT_EQ(*f.find("general.alignment"), Value{std::uint32_t{32}});
  EXPECT_EQ(*f.find("general.file_type"), Value{std::uint32_t{1}});
  EXPECT_EQ(*f.find("llama.context_length"), Value{std::uint32_t{32768}});
  EXPECT_EQ(*f.find("llama.embedding_length"), Value{std::uint32_t{64}});
  EXPECT_EQ(*f.find("llama.block_count"), Value{std::uint32_t{2}});
  EXPECT_EQ(*f.find("llama.feed_forward_length"), Value{std::uint32_t{128}});
  EXPECT_EQ(*f.find("llama.attention.head_count"), Value{std::uint32_t{4}});
  EXPECT_EQ(*f.find("llama.attention.head_count_kv"), Value{std::uint32_t{2}});
  EXPECT_EQ(*f.find("llama.rope.dimension_count"), Value{std::uint32_t{16}});
  EXPECT_EQ(f.find("llama.attention.layer_norm_rms_epsilon")->type(), ValueType::float32);
  EXPECT_EQ(*f.find("tokenizer.ggml.model"), Value{std::string("llama")});
  EXPECT_EQ(std::get<Array>(f.find("tokenizer.ggml.scores")->data).element_type(),
            ValueType::float32);
  EXPECT_EQ(std::get<Array>(f.find("tokenizer.ggml.token_type")->data).element_type(),
            ValueType::int32);
  EXPECT_EQ(*f.find("general.name"), Value{std::string("kvbench synthetic 2x64 h4/2 ff128")});
}

TEST(SyntheticModel, TensorsHaveLlamaShapes) {
  const GgufFile f = synthetic_model(preset_shape("tiny").value(), GgmlType::f16);
  ASSERT_EQ(f.tensors.size(), 3U + 2 * 9);
  const auto find = [&f](const std::string& name) {
    for (const TensorInfo& t : f.tensors) {
      if (t.name == name) {
        return t;
      }
    }
    ADD_FAILURE() << name;
    return TensorInfo{};
  };
  using Ne = std::vector<std::uint64_t>;
  EXPECT_EQ(find("token_embd.weight").ne, (Ne{64, 512}));
  EXPECT_EQ(find("output.weight").ne, (Ne{64, 512}));
  EXPECT_EQ(find("output_norm.weight").ne, (Ne{64}));
  EXPECT_EQ(find("output_norm.weight").type, GgmlType::f32);
  EXPECT_EQ(find("blk.1.attn_norm.weight").type, GgmlType::f32);
  EXPECT_EQ(find("blk.1.attn_q.weight").ne, (Ne{64, 64}));
  EXPECT_EQ(find("blk.1.attn_k.weight").ne, (Ne{64, 32}));
  EXPECT_EQ(find("blk.1.attn_v.weight").ne, (Ne{64, 32}));
  EXPECT_EQ(find("blk.1.attn_output.weight").ne, (Ne{64, 64}));
  EXPECT_EQ(find("blk.0.ffn_gate.weight").ne, (Ne{64, 128}));
  EXPECT_EQ(find("blk.0.ffn_up.weight").ne, (Ne{64, 128}));
  EXPECT_EQ(find("blk.0.ffn_down.weight").ne, (Ne{128, 64}));
  EXPECT_EQ(find("blk.0.ffn_down.weight").type, GgmlType::f16);
  // lesson: the 49 MB model of the reference measurements.
  EXPECT_EQ(synthetic_model_bytes(preset_shape("lesson").value(), GgmlType::f16) / 1000000, 49U);
}

TEST(SyntheticModel, RejectsBadShapesListingEveryProblem) {
  ModelShape s = preset_shape("tiny").value();
  s.n_head_kv = 3;
  s.n_vocab = 100;
  try {
    synthetic_model(s, GgmlType::f16);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "head count 4 is not a multiple of the KV head count 3\n"
                 "vocabulary size must be at least 502, not 100");
  }
  EXPECT_THROW(synthetic_model(preset_shape("tiny").value(), GgmlType::q8_0), InputError);
}

TEST(SyntheticModel, StreamsTensorDataInBoundedPieces) {
  const TensorInfo big{"big.weight", {1024, 600}, GgmlType::f16, 0};
  std::vector<std::size_t> pieces;
  synthesize_tensor_data(big, 1,
                         [&](std::span<const std::uint8_t> b) { pieces.push_back(b.size()); });
  EXPECT_EQ(pieces, (std::vector<std::size_t>{524288, 524288, 180224}));
}

TEST(SyntheticModel, WeightsAreSmallAndNormsAreOne) {
  Bytes data;
  const auto collect = [&data](std::span<const std::uint8_t> b) {
    data.insert(data.end(), b.begin(), b.end());
  };
  synthesize_tensor_data(TensorInfo{"blk.0.ffn_up.weight", {256, 256}, GgmlType::f16, 0}, 9,
                         collect);
  double sum = 0.0;
  double sum_sq = 0.0;
  float max_abs = 0.0F;
  for (std::size_t i = 0; i < data.size(); i += 2) {
    std::uint16_t h = 0;
    std::memcpy(&h, &data[i], 2);
    const float x = half_to_float(h);
    sum += x;
    sum_sq += static_cast<double>(x) * x;
    max_abs = std::max(max_abs, std::fabs(x));
  }
  const double n = static_cast<double>(data.size()) / 2;
  EXPECT_NEAR(sum / n, 0.0, 0.001);
  EXPECT_NEAR(std::sqrt(sum_sq / n), 0.02, 0.001);
  EXPECT_LE(max_abs, 0.0693F);  // 2 * sqrt(3) * 0.02: a sum of four uniforms is bounded

  data.clear();
  synthesize_tensor_data(TensorInfo{"blk.3.ffn_norm.weight", {5}, GgmlType::f32, 0}, 9, collect);
  const float one = 1.0F;
  Bytes ones(20);
  for (std::size_t i = 0; i < 5; ++i) {
    std::memcpy(&ones[4 * i], &one, 4);
  }
  EXPECT_EQ(data, ones);
}

TEST(SyntheticModel, SameSeedSameBytesOtherSeedOtherWeights) {
  TempDir dir;
  const ModelShape tiny = preset_shape("tiny").value();
  write_synthetic_model(dir / "a.gguf", tiny, GgmlType::f16, 7);
  write_synthetic_model(dir / "b.gguf", tiny, GgmlType::f16, 7);
  write_synthetic_model(dir / "c.gguf", tiny, GgmlType::f16, 8);
  const Bytes a = read_all(dir / "a.gguf");
  const Bytes c = read_all(dir / "c.gguf");
  EXPECT_EQ(a, read_all(dir / "b.gguf"));
  ASSERT_EQ(a.size(), c.size());
  EXPECT_EQ(a.size(), synthetic_model_bytes(tiny, GgmlType::f16));

  const GgufFile fa = parse(a);
  const GgufFile fc = parse(c);
  EXPECT_EQ(fa.metadata, fc.metadata);
  EXPECT_EQ(fa.tensors, fc.tensors);
  for (std::size_t i = 0; i < fa.tensors.size(); ++i) {
    const auto da = tensor_data(a, fa, i);
    const auto dc = tensor_data(c, fc, i);
    const bool same = std::equal(da.begin(), da.end(), dc.begin(), dc.end());
    EXPECT_EQ(same, fa.tensors[i].name.ends_with("_norm.weight")) << fa.tensors[i].name;
  }
  // Only the three files: no temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 3);
}

TEST(SyntheticModel, F32WeightsDoubleTheMatrices) {
  TempDir dir;
  const ModelShape tiny = preset_shape("tiny").value();
  write_synthetic_model(dir / "f32.gguf", tiny, GgmlType::f32, 1);
  const GgufFile f = parse(read_all(dir / "f32.gguf"));
  EXPECT_EQ(*f.find("general.file_type"), Value{std::uint32_t{0}});
  for (const TensorInfo& t : f.tensors) {
    EXPECT_EQ(t.type, GgmlType::f32) << t.name;
  }
  EXPECT_EQ(fs::file_size(dir / "f32.gguf"), synthetic_model_bytes(tiny, GgmlType::f32));
}

TEST(SyntheticModel, FailedWritesLeaveNothingBehind) {
  TempDir dir;
  EXPECT_THROW(write_synthetic_model(dir / "missing" / "m.gguf", preset_shape("tiny").value(),
                                     GgmlType::f16, 1),
               Error);
  ModelShape bad = preset_shape("tiny").value();
  bad.n_embd = 0;
  EXPECT_THROW(write_synthetic_model(dir / "bad.gguf", bad, GgmlType::f16, 1), InputError);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace kvbench::gguf
