// The KV arithmetic against the lesson's figures and llama.cpp's layout rules.

#include "harness/kv/kv_arith.h"

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::kv {
namespace {

TEST(KvArith, LessonQwenFiguresPerToken) {
  const auto shape = kv_preset("qwen2.5:3b");
  ASSERT_TRUE(shape);
  EXPECT_EQ(arithmetic_for(*shape, "f16")->bytes_per_token, 36864U);
  EXPECT_EQ(arithmetic_for(*shape, "q8_0")->bytes_per_token, 19584U);
  EXPECT_EQ(arithmetic_for(*shape, "f32")->bytes_per_token, 73728U);
  EXPECT_EQ(arithmetic_for(*shape, "q4_0")->bytes_per_token, 10368U);  // 18/32 B a number
  EXPECT_EQ(arithmetic_for(*shape, "q5_1")->bytes_per_token, 13824U);  // 24/32
  EXPECT_FALSE(arithmetic_for(*shape, "q4_K"));  // not a cache type llama.cpp accepts
}

// K and V apart: each half its own type's rows; one name is both halves alike.
TEST(KvArith, APairsHalvesAreEachTheirOwnType) {
  const auto shape = *kv_preset("qwen2.5:3b");
  const auto split = level_bytes_per_token(shape, "q8_0/f16");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->k, 19584U / 2) << "q8_0 keys: half of q8_0's both";
  EXPECT_EQ(split->v, 36864U / 2) << "f16 values: half of f16's both";
  EXPECT_EQ(level_bytes_per_token(shape, "q8_0")->total(), 19584U);
  EXPECT_EQ(level_bytes_per_token(shape, "f16/q8_0")->total(), split->total());
  EXPECT_FALSE(level_bytes_per_token(shape, "q8_0/q4_K")) << "not a cache type";
  EXPECT_FALSE(level_bytes_per_token(explicit_shape(1, 1, 16, 16), "f16/q8_0"))
      << "a row of 16 values is no whole q8_0 block";
  EXPECT_TRUE(level_bytes_per_token(explicit_shape(1, 1, 16, 16), "f16/f32"));
}

TEST(KvArith, LessonEightThousandTokensAtF16AndQ8) {
  const auto shape = *kv_preset("qwen2.5:3b");
  const CacheLayout layout{8000, 1, false};
  EXPECT_EQ(cache_cells(layout), 8192U);  // padded to a multiple of 256
  EXPECT_EQ(cache_bytes(layout, *arithmetic_for(shape, "f16")->bytes_per_token), 301989888U);
  EXPECT_EQ(cache_bytes(layout, *arithmetic_for(shape, "q8_0")->bytes_per_token), 160432128U);
}

TEST(KvArith, EveryAcceptedTypeInHelpOrder) {
  const auto all = arithmetic_for_all_types(*kv_preset("lesson"));
  ASSERT_EQ(all.size(), 9U);
  const char* names[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};
  const std::uint64_t bytes[] = {8192, 4096, 4096, 2176, 1152, 1280, 1152, 1408, 1536};
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].name, names[i]);
    EXPECT_EQ(all[i].bytes_per_token, bytes[i]) << names[i];
  }
  EXPECT_DOUBLE_EQ(all[3].bytes_per_number, 34.0 / 32.0);
}

TEST(KvArith, OddShapeRowsThatAreNotWholeBlocks) {
  // 3 KV heads of 96: 288 numbers a row, 9 blocks of 32: every type works.
  const auto odd = explicit_shape(12, 3, 96, 0);
  EXPECT_EQ(arithmetic_for(odd, "f16")->bytes_per_token, 13824U);
  EXPECT_EQ(arithmetic_for(odd, "q8_0")->bytes_per_token, 7344U);
  // 3 KV heads of 10: 30 numbers, not a whole q8_0 block.
  const auto bad = explicit_shape(2, 3, 10, 0);
  EXPECT_EQ(arithmetic_for(bad, "f16")->bytes_per_token, 240U);
  EXPECT_FALSE(arithmetic_for(bad, "q8_0")->bytes_per_token);
}

TEST(KvArith, PaddingAndSequences) {
  EXPECT_EQ(pad_ctx(0), 0U);
  EXPECT_EQ(pad_ctx(1), 256U);
  EXPECT_EQ(pad_ctx(2048), 2048U);
  EXPECT_EQ(pad_ctx(2049), 2304U);
  EXPECT_EQ(cache_cells({1000, 1, false}), 1024U);
  // Not unified: 4 streams of pad(4096 / 4) = 1024 cells; 4000 -> 4096 / 3 = 1365 -> 1536 each.
  EXPECT_EQ(cache_cells({4096, 4, false}), 4096U);
  EXPECT_EQ(cache_cells({4000, 3, false}), 4608U);
  EXPECT_EQ(cache_cells({4000, 3, true}), 4096U);
}

TEST(KvArith, ExplicitShapeNeedsEverySize) {
  EXPECT_THROW(explicit_shape(0, 2, 128, 0), InputError);
  EXPECT_THROW(explicit_shape(36, 0, 128, 0), InputError);
  EXPECT_THROW(explicit_shape(36, 2, 0, 0), InputError);
  const auto s = explicit_shape(36, 2, 128, 64);
  EXPECT_EQ(arithmetic_for(s, "f16")->bytes_per_token, 36U * 2 * (128 + 64) * 2);
}

TEST(KvArith, PresetNames) {
  EXPECT_EQ(kv_preset_names().front(), "qwen2.5:3b");
  EXPECT_TRUE(kv_preset("tiny"));
  EXPECT_FALSE(kv_preset("llama3"));
}

}  // namespace
}  // namespace kvbench::kv
