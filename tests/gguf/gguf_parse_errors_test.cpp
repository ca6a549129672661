#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {
namespace {

using Bytes = std::vector<std::uint8_t>;
using ::testing::HasSubstr;

GgufFile small_file() {
  GgufFile f;
  f.set("general.architecture", Value{std::string("llama")});
  f.set("k.count", Value{std::uint32_t{7}});
  f.set("k.list", Value{Array{std::vector<std::string>{"ab", "c"}}});
  f.set("k.flag", Value{false});
  f.tensors.push_back(TensorInfo{"first", {8}, GgmlType::f32, 0});    // 32 bytes
  f.tensors.push_back(TensorInfo{"second", {16}, GgmlType::f16, 0});  // 32 bytes
  assign_offsets(f);
  return f;
}

Bytes small_bytes() {
  return serialize(small_file(), {Bytes(32, 1), Bytes(32, 2)});
}

// Index of the first byte after the first occurrence of `text` in `bytes`.
std::size_t after(const Bytes& bytes, std::string_view text) {
  const auto it = std::search(bytes.begin(), bytes.end(), text.begin(), text.end());
  EXPECT_NE(it, bytes.end()) << text;
  return static_cast<std::size_t>(it - bytes.begin()) + text.size();
}

void put_u32(Bytes& bytes, std::size_t at, std::uint32_t v) {
  std::memcpy(&bytes[at], &v, 4);
}
void put_u64(Bytes& bytes, std::size_t at, std::uint64_t v) {
  std::memcpy(&bytes[at], &v, 8);
}

std::string parse_error(const Bytes& bytes) {
  try {
    parse(bytes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GgufParseErrors, EveryStrictPrefixIsRejectedAsInputError) {
  const Bytes full = small_bytes();
  ASSERT_NO_THROW(parse(full));
  for (std::size_t n = 0; n < full.size(); ++n) {
    const Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(parse(prefix), InputError) << "prefix of " << n << " bytes";
  }
}

TEST(GgufParseErrors, PrefixParsingAsksForMoreUntilTheInfosAreComplete) {
  const Bytes full = small_bytes();
  const std::size_t infos_end = after(full, "second") + 4 + 8 + 4 + 8;
  for (std::size_t n = 0; n <= full.size(); ++n) {
    const std::span<const std::uint8_t> prefix(full.data(), n);
    EXPECT_EQ(parse_header(prefix).has_value(), n >= infos_end) << n;
    if (n < infos_end) {
      EXPECT_THROW(parse_header(prefix, n), InputError) << n;  // the prefix is the whole file
    }
  }
}

TEST(GgufParseErrors, TruncationNamesTheByte) {
  const Bytes full = small_bytes();
  EXPECT_EQ(parse_error(Bytes(full.begin(), full.begin() + 20)),
            "truncated GGUF file at byte 16: metadata count needs 8 bytes, 4 remain");
  EXPECT_EQ(parse_error(Bytes(full.begin(), full.end() - 1)),
            "truncated GGUF file: tensor data ends at byte " + std::to_string(full.size()) +
                ", the file has " + std::to_string(full.size() - 1) + " bytes");
}

TEST(GgufParseErrors, BadMagic) {
  Bytes b = small_bytes();
  b[3] = 'L';
  EXPECT_EQ(parse_error(b), "not a GGUF file (the first 4 bytes are not \"GGUF\")");
  EXPECT_EQ(parse_error(Bytes{'G', 'X'}), "not a GGUF file (the first 4 bytes are not \"GGUF\")");
  EXPECT_THROW(parse_header(Bytes{'{', '"'}), InputError);  // not "read more"
  EXPECT_EQ(parse_error(Bytes{}), "not a GGUF file (it is empty)");
}

TEST(GgufParseErrors, UnsupportedVersions) {
  Bytes b = small_bytes();
  put_u32(b, 4, 4);
  EXPECT_EQ(parse_error(b),
            "invalid GGUF at byte 8: unsupported GGUF version 4 (kvbench reads versions 2 and 3)");
  put_u32(b, 4, 1);
  EXPECT_THAT(parse_error(b), HasSubstr("unsupported GGUF version 1"));
  put_u32(b, 4, 0x03000000);
  EXPECT_THAT(parse_error(b), HasSubstr("big-endian GGUF files are not supported"));
  put_u32(b, 4, 2);
  EXPECT_EQ(parse(b).version, 2U);
}

TEST(GgufParseErrors, DuplicateKey) {
  Bytes b = small_bytes();
  const std::size_t flag = after(b, "k.flag") - 6;
  std::memcpy(&b[flag], "k.list", 6);  // same length, so the layout is unchanged
  EXPECT_EQ(parse_error(b),
            "invalid GGUF at byte " + std::to_string(flag - 8) + ": duplicate key 'k.list'");
}

TEST(GgufParseErrors, UnknownValueTypeId) {
  Bytes b = small_bytes();
  const std::size_t type_at = after(b, "k.count");
  put_u32(b, type_at, 13);
  EXPECT_EQ(parse_error(b), "invalid GGUF at byte " + std::to_string(type_at) +
                                ": value of 'k.count' has unknown value type id 13");
}

TEST(GgufParseErrors, UnknownArrayElementType) {
  Bytes b = small_bytes();
  put_u32(b, after(b, "k.list") + 4, 99);
  EXPECT_THAT(parse_error(b), HasSubstr("array element type of value of 'k.list' has unknown "
                                        "value type id 99"));
}

TEST(GgufParseErrors, BoolMustBeZeroOrOne) {
  Bytes b = small_bytes();
  b[after(b, "k.flag") + 4] = 2;
  EXPECT_THAT(parse_error(b), HasSubstr("value of 'k.flag' is a bool of value 2"));
}

TEST(GgufParseErrors, HugeArrayCountFailsWithoutAllocating) {
  Bytes b = small_bytes();
  put_u64(b, after(b, "k.list") + 8, 1ULL << 62);
  EXPECT_THAT(parse_error(b), HasSubstr("4611686018427387904 elements of value of 'k.list' "
                                        "needs 18446744073709551615 bytes"));
  b = small_bytes();
  put_u64(b, 8, 1ULL << 60);  // tensor count
  EXPECT_THAT(parse_error(b), HasSubstr("tensor infos needs"));
}

TEST(GgufParseErrors, UnknownTensorType) {
  Bytes b = small_bytes();
  const std::size_t type_at = after(b, "second") + 4 + 8;
  put_u32(b, type_at, 4);
  EXPECT_EQ(parse_error(b), "invalid GGUF at byte " + std::to_string(type_at) +
                                ": tensor 'second' has unknown ggml type id 4");
}

TEST(GgufParseErrors, OffsetsMustBeCumulative) {
  Bytes b = small_bytes();
  const std::size_t offset_at = after(b, "second") + 4 + 8 + 4;
  put_u64(b, offset_at, 64);
  EXPECT_EQ(parse_error(b), "invalid GGUF at byte " + std::to_string(offset_at) +
                                ": tensor 'second' has offset 64, expected 32 (tensor data must "
                                "follow the infos' order, each padded to 32 bytes)");
}

TEST(GgufParseErrors, TooManyDimensions) {
  Bytes b = small_bytes();
  put_u32(b, after(b, "first"), 5);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'first' has 5 dimensions, at most 4"));
}

TEST(GgufParseErrors, DuplicateTensorName) {
  GgufFile f = small_file();
  f.tensors[1].name = "firs2";
  Bytes b = serialize(f, {Bytes(32), Bytes(32)});
  b[after(b, "firs2") - 1] = 't';
  EXPECT_THAT(parse_error(b), HasSubstr("duplicate tensor name 'first'"));
}

TEST(GgufParseErrors, BlockSizeMustDivideTheFirstDimension) {
  GgufFile f = small_file();
  f.tensors[1].type = GgmlType::q8_0;
  f.tensors[1].ne = {64};
  assign_offsets(f);
  Bytes b = serialize(f, {Bytes(32), Bytes(68)});
  put_u64(b, after(b, "second") + 4, 48);
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor 'second': ne[0] = 48 is not a multiple of the q8_0 block size 32"));
}

TEST(GgufParseErrors, AlignmentMustBeAU32PowerOfTwo) {
  GgufFile f = small_file();
  f.set("general.alignmenX", Value{std::uint64_t{32}});  // renamed below: serialize refuses it
  Bytes b = serialize_header(f);
  b[after(b, "general.alignmenX") - 1] = 't';
  EXPECT_EQ(parse_error(b), "general.alignment must be of type u32, not u64");

  f = small_file();
  f.set("general.alignment", Value{std::uint32_t{48}});
  EXPECT_THROW(serialize_header(f), InputError);
  f.set("general.alignment", Value{std::uint32_t{64}});
  b = serialize_header(f);
  put_u32(b, after(b, "general.alignment") + 4, 48);
  EXPECT_EQ(parse_error(b), "general.alignment must be a power of two, not 48");
  // A power of two past 1 MiB (a fuzzed file asked for 512 MiB of padding) is refused too.
  put_u32(b, after(b, "general.alignment") + 4, 1U << 29);
  EXPECT_EQ(parse_error(b),
            "general.alignment of 536870912 bytes is past the 1048576 that kvbench reads");
  f.set("general.alignment", Value{std::uint32_t{1} << 21});
  EXPECT_THROW(serialize_header(f), InputError);
  f.set("general.alignment", Value{kMaxAlignment});
  EXPECT_NO_THROW(serialize_header(f));
}

TEST(GgufParseErrors, ArraysNestAtMostFourDeep) {
  const auto nest = [](int depth) {
    Array a{std::vector<std::uint8_t>{1}};
    for (int i = 1; i < depth; ++i) {
      a = Array{std::vector<Array>{a}};
    }
    GgufFile f;
    f.set("deep", Value{a});
    return serialize_header(f);
  };
  EXPECT_NO_THROW(parse(nest(4)));
  EXPECT_THAT(parse_error(nest(5)), HasSubstr("value of 'deep' nests arrays deeper than 4"));
}

TEST(GgufParseErrors, LongKeyOrTensorName) {
  GgufFile f;
  f.set(std::string(65536, 'k'), Value{std::uint8_t{1}});
  EXPECT_THAT(parse_error(serialize_header(f)),
              HasSubstr("key of metadata pair 0 is 65536 bytes long, the limit is 65535"));
  Bytes b = small_bytes();
  put_u64(b, after(b, "second") - 6 - 8, 64);
  EXPECT_THAT(parse_error(b), HasSubstr("name of tensor 1 is 64 bytes long, the limit is 63"));
}

// Random corruption must end in a parsed file or an InputError: nothing else, and no crash.
TEST(GgufParseErrors, CorruptedBytesNeverCrash) {
  const Bytes good = small_bytes();
  std::mt19937_64 rng(12345);
  int rejected = 0;
  for (int round = 0; round < 4000; ++round) {
    Bytes b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      const std::size_t at = rng() % b.size();
      b[at] = (round % 2 == 0) ? static_cast<std::uint8_t>(rng()) : 0xFF;
    }
    b.resize(b.size() - (rng() % 3 == 0 ? rng() % b.size() : 0));
    try {
      parse(b);
    } catch (const InputError&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace kvbench::gguf
