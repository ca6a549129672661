// The KV and buffer lines of llama.cpp logs, current and older formats, parsed from literal lines.

#include "harness/kv/server_log.h"

#include <gtest/gtest.h>

namespace kvbench::kv {
namespace {

constexpr const char* kCurrent =
    "0.00.050.100 I load_tensors:   CPU_Mapped model buffer size =    25.02 MiB\n"
    "0.00.055.600 I llama_kv_cache:        CPU KV buffer size =     8.00 MiB\n"
    "0.00.055.670 I llama_kv_cache: size =    8.00 MiB (  4096 cells,   4 layers,  1/1 seqs), "
    "K (f16):    4.00 MiB, V (f16):    4.00 MiB\n"
    "0.00.060.000 I llama_context:        CPU compute buffer size =    70.50 MiB\n"
    "0.00.070.000 I srv  update_slots: all slots are idle\n";

TEST(ServerLog, CurrentFormatWithTimestamps) {
  const auto m = parse_server_log(kCurrent);
  ASSERT_EQ(m.kv.size(), 1U);
  const KvTotals& t = m.kv[0];
  EXPECT_EQ(t.component, "llama_kv_cache");
  EXPECT_EQ(t.cache, "");
  EXPECT_DOUBLE_EQ(t.size_mib, 8.0);
  EXPECT_EQ(t.cells, 4096U);
  EXPECT_EQ(t.layers, 4U);
  EXPECT_EQ(t.seqs, 1U);
  EXPECT_EQ(t.streams, 1U);
  EXPECT_EQ(t.type_k, "f16");
  EXPECT_EQ(t.type_v, "f16");
  EXPECT_DOUBLE_EQ(t.k_mib, 4.0);
  EXPECT_DOUBLE_EQ(t.v_mib, 4.0);
  ASSERT_EQ(m.buffers.size(), 3U);
  EXPECT_EQ(m.buffers[0], (BufferSize{"", "load_tensors", "CPU_Mapped", "model", 25.02}));
  EXPECT_EQ(m.buffers[1], (BufferSize{"", "llama_kv_cache", "CPU", "KV", 8.0}));
  EXPECT_EQ(m.buffers[2], (BufferSize{"", "llama_context", "CPU", "compute", 70.5}));
  EXPECT_EQ(logged_kv_bytes(m), 8U * 1024 * 1024);
  EXPECT_EQ(logged_buffer_bytes(m, "compute"), 73924608U);
  EXPECT_FALSE(logged_buffer_bytes(m, "RS"));
}

TEST(ServerLog, OlderUnifiedAndMid2025Formats) {
  const auto m = parse_server_log(
      "llama_kv_cache_unified:      CUDA0 KV buffer size =  1920.00 MiB\n"
      "llama_kv_cache_unified: size = 1920.00 MiB ( 32768 cells,  30 layers,  1 seqs), "
      "K (q8_0):  960.00 MiB, V (q8_0):  960.00 MiB\n");
  ASSERT_EQ(m.kv.size(), 1U);
  EXPECT_EQ(m.kv[0].component, "llama_kv_cache_unified");
  EXPECT_EQ(m.kv[0].cells, 32768U);
  EXPECT_EQ(m.kv[0].seqs, 1U);
  EXPECT_FALSE(m.kv[0].streams);
  EXPECT_EQ(m.kv[0].type_k, "q8_0");
  EXPECT_EQ(m.buffers[0].backend, "CUDA0");
  EXPECT_EQ(logged_kv_bytes(m), 1920U * 1024 * 1024);
}

TEST(ServerLog, OldestSelfSizeFormat) {
  const auto m = parse_server_log(
      "llama_kv_cache_init:        CPU KV buffer size =   256.00 MiB\n"
      "llama_new_context_with_model: KV self size  =  256.00 MiB, K (f16):  128.00 MiB, "
      "V (f16):  128.00 MiB\n");
  ASSERT_EQ(m.kv.size(), 1U);
  EXPECT_EQ(m.kv[0].component, "llama_new_context_with_model");
  EXPECT_FALSE(m.kv[0].cells);
  EXPECT_DOUBLE_EQ(m.kv[0].k_mib, 128.0);
  EXPECT_EQ(logged_kv_bytes(m), 256U * 1024 * 1024);
}

TEST(ServerLog, BuffersAloneGiveTheKvSize) {
  const auto m = parse_server_log(
      "llama_kv_cache_init:      CUDA0 KV buffer size =   100.00 MiB\n"
      "llama_kv_cache_init:        CPU KV buffer size =    28.50 MiB\n");
  EXPECT_TRUE(m.kv.empty());
  EXPECT_EQ(logged_kv_bytes(m), static_cast<std::uint64_t>(128.5 * 1024 * 1024));
}

TEST(ServerLog, SlidingWindowModelsHaveTwoCaches) {
  const auto m = parse_server_log(
      "llama_kv_cache_iswa: creating non-SWA KV cache, size = 8192 cells\n"
      "llama_kv_cache:        CPU KV buffer size =    40.00 MiB\n"
      "llama_kv_cache: size =   40.00 MiB (  8192 cells,   5 layers,  1/1 seqs), "
      "K (f16):   20.00 MiB, V (f16):   20.00 MiB\n"
      "llama_kv_cache_iswa: creating     SWA KV cache, size = 1536 cells\n"
      "llama_kv_cache:        CPU KV buffer size =    37.50 MiB\n"
      "llama_kv_cache: size =   37.50 MiB (  1536 cells,  25 layers,  1/1 seqs), "
      "K (f16):   18.75 MiB, V (f16):   18.75 MiB\n");
  ASSERT_EQ(m.kv.size(), 2U);
  EXPECT_EQ(m.kv[0].cache, "non-swa");
  EXPECT_EQ(m.kv[1].cache, "swa");
  EXPECT_EQ(m.buffers.size(), 2U);
  EXPECT_EQ(logged_kv_bytes(m), static_cast<std::uint64_t>(77.5 * 1024 * 1024));
}

TEST(ServerLog, TheLastValueWins) {
  const auto m = parse_server_log(
      "llama_kv_cache:        CPU KV buffer size =   512.00 MiB\n"
      "llama_kv_cache: size =  512.00 MiB ( 65536 cells,   4 layers,  1/1 seqs), "
      "K (f16):  256.00 MiB, V (f16):  256.00 MiB\n"
      "load_tensors:   CPU_Mapped model buffer size =    25.02 MiB\n"
      "llama_kv_cache:        CPU KV buffer size =    16.00 MiB\n"
      "llama_kv_cache: size =   16.00 MiB (  8192 cells,   4 layers,  1/1 seqs), "
      "K (f16):    8.00 MiB, V (f16):    8.00 MiB\n");
  ASSERT_EQ(m.kv.size(), 1U);
  EXPECT_EQ(m.kv[0].cells, 8192U);
  EXPECT_EQ(logged_kv_bytes(m), 16U * 1024 * 1024);
  EXPECT_EQ(logged_buffer_bytes(m, "KV"), 16U * 1024 * 1024);
}

TEST(ServerLog, ALogWithoutKvLinesHasNothing) {
  const auto m = parse_server_log(
      "main: server is listening on http://127.0.0.1:8080\nsrv  update_slots: all slots are "
      "idle\n");
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(logged_kv_bytes(m));
}

TEST(ServerLog, JsonRoundTrip) {
  const auto m = parse_server_log(kCurrent);
  const nlohmann::json j = m;
  EXPECT_EQ(j["kv_bytes"], 8U * 1024 * 1024);
  const auto back = j.get<ServerLogMemory>();
  EXPECT_EQ(back.kv, m.kv);
  EXPECT_EQ(back.buffers, m.buffers);
}

}  // namespace
}  // namespace kvbench::kv
