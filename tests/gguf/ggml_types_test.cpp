#include "harness/gguf/ggml_types.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::gguf {
namespace {

TEST(GgmlTypes, RowSizesOf4096Elements) {
  EXPECT_EQ(row_size(GgmlType::f32, 4096), 16384U);
  EXPECT_EQ(row_size(GgmlType::f16, 4096), 8192U);
  EXPECT_EQ(row_size(GgmlType::bf16, 4096), 8192U);
  EXPECT_EQ(row_size(GgmlType::q8_0, 4096), 4352U);
  EXPECT_EQ(row_size(GgmlType::q4_0, 4096), 2304U);
  EXPECT_EQ(row_size(GgmlType::q4_1, 4096), 2560U);
  EXPECT_EQ(row_size(GgmlType::q5_0, 4096), 2816U);
  EXPECT_EQ(row_size(GgmlType::q5_1, 4096), 3072U);
  EXPECT_EQ(row_size(GgmlType::iq4_nl, 4096), 2304U);
  EXPECT_EQ(row_size(GgmlType::q4_k, 4096), 2304U);
  EXPECT_EQ(row_size(GgmlType::q6_k, 4096), 3360U);
  EXPECT_EQ(row_size(GgmlType::q8_k, 4096), 4672U);
}

TEST(GgmlTypes, RowSizeOfAKvRow) {
  // 2 KV heads of dim 64: one token's K row in one layer.
  EXPECT_EQ(row_size(GgmlType::q8_0, 128), 136U);
  EXPECT_EQ(row_size(GgmlType::f16, 128), 256U);
  EXPECT_EQ(row_size(GgmlType::q8_0, 0), 0U);
}

TEST(GgmlTypes, RowSizeRejectsPartialBlocks) {
  EXPECT_THROW(row_size(GgmlType::q8_0, 48), InputError);
  EXPECT_THROW(row_size(GgmlType::q4_k, 4000), InputError);
  try {
    row_size(GgmlType::q8_0, 48);
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "a q8_0 row must hold a multiple of 32 elements, got 48");
  }
}

TEST(GgmlTypes, LooksUpIds) {
  ASSERT_NE(find_ggml_type(30), nullptr);
  EXPECT_EQ(find_ggml_type(30)->name, "bf16");
  EXPECT_EQ(find_ggml_type(8)->block_bytes, 34U);
  EXPECT_EQ(find_ggml_type(4), nullptr);   // retired q4_2
  EXPECT_EQ(find_ggml_type(31), nullptr);  // retired
  EXPECT_EQ(find_ggml_type(43), nullptr);  // GGML_TYPE_COUNT
  EXPECT_EQ(find_ggml_type(42)->block_size, 64U);
}

TEST(GgmlTypes, TableIsInIdOrderWithUniqueNames) {
  std::set<std::string_view> names;
  std::uint32_t last = 0;
  for (const GgmlTypeInfo& t : ggml_types()) {
    if (t.type != GgmlType::f32) {
      EXPECT_GT(static_cast<std::uint32_t>(t.type), last);
    }
    last = static_cast<std::uint32_t>(t.type);
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_GT(t.block_size, 0U);
    EXPECT_GT(t.block_bytes, 0U);
  }
  EXPECT_EQ(ggml_types().size(), 35U);
}

TEST(GgmlTypes, FindsTypesByNameIgnoringCase) {
  EXPECT_EQ(ggml_type_from_name("q8_0"), GgmlType::q8_0);
  EXPECT_EQ(ggml_type_from_name("F16"), GgmlType::f16);
  EXPECT_EQ(ggml_type_from_name("q4_k"), GgmlType::q4_k);
  EXPECT_EQ(ggml_type_from_name("IQ4_NL"), GgmlType::iq4_nl);
  EXPECT_EQ(ggml_type_from_name("q8"), std::nullopt);
  EXPECT_EQ(ggml_type_from_name(""), std::nullopt);
}

TEST(GgmlTypes, KvCacheTypesAreThoseLlamaCppAccepts) {
  std::set<std::string_view> names;
  for (GgmlType t : kv_cache_types()) {
    names.insert(ggml_type_info(t).name);
  }
  EXPECT_EQ(names, (std::set<std::string_view>{"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1",
                                               "iq4_nl", "q5_0", "q5_1"}));
}

TEST(GgmlTypes, ACacheTypeIsQuantizedWhenItStoresBlocks) {
  for (std::string_view name : {"q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}) {
    EXPECT_TRUE(quantized_cache_type(name)) << name;
  }
  for (std::string_view name : {"f16", "f32", "bf16", "Q8_0", "q4_K", "q8", ""}) {
    EXPECT_FALSE(quantized_cache_type(name)) << name;
  }
  EXPECT_EQ(kv_cache_type("q8_0"), GgmlType::q8_0);
  EXPECT_EQ(kv_cache_type("q4_K"), std::nullopt);  // a type, but not one a KV cache takes
}

}  // namespace
}  // namespace kvbench::gguf
