// `kvbench kv` output for the lesson's preset, an explicit shape and bad input.

#include "harness/cli/kv_cmd.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/error.h"

namespace kvbench::cli {
namespace {

using ::testing::HasSubstr;

TEST(KvCommand, LessonPresetTable) {
  KvOptions o;
  o.preset = "qwen2.5:3b";
  o.ctx = {8000};
  std::ostringstream out;
  run_kv(o, out);
  EXPECT_THAT(out.str(), HasSubstr("| f16 | 2 | 36,864 | 288.00 MiB |"));
  EXPECT_THAT(out.str(), HasSubstr("| q8_0 | 1.0625 | 19,584 | 153.00 MiB |"));
  EXPECT_THAT(out.str(), HasSubstr("-c 8000 (8192 cells)"));
  EXPECT_THAT(out.str(), HasSubstr("pads n_ctx up to a multiple of 256"));
}

TEST(KvCommand, ExplicitShapeJsonWithParallelSequences) {
  KvOptions o;
  o.layers = 12;
  o.kv_heads = 3;
  o.head_dim = 96;
  o.ctx = {4096};
  o.parallel = 2;
  o.format = "json";
  std::ostringstream out;
  run_kv(o, out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["n_seq"], 2);
  EXPECT_EQ(j["cache_types"][1]["type"], "f16");
  EXPECT_EQ(j["cache_types"][1]["bytes_per_token"], 13824);
  EXPECT_EQ(j["cache_types"][1]["totals"][0]["cells"], 4096);
  EXPECT_EQ(j["cache_types"][1]["totals"][0]["bytes"], 13824 * 4096);
  EXPECT_EQ(j["cache_types"][3]["bytes_per_token"], 7344);
}

TEST(KvCommand, ExactlyOneSource) {
  KvOptions none;
  std::ostringstream out;
  EXPECT_THROW(run_kv(none, out), InputError);
  KvOptions two;
  two.preset = "tiny";
  two.layers = 4;
  EXPECT_THROW(run_kv(two, out), InputError);
  KvOptions unknown;
  unknown.preset = "qwen3";
  EXPECT_THROW(run_kv(unknown, out), InputError);
  KvOptions partial;
  partial.layers = 4;
  EXPECT_THROW(run_kv(partial, out), InputError);
}

}  // namespace
}  // namespace kvbench::cli
