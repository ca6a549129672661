#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {
namespace {

using Bytes = std::vector<std::uint8_t>;

GgufFile every_value_type() {
  GgufFile f;
  f.set("t.u8", Value{std::uint8_t{200}});
  f.set("t.i8", Value{std::int8_t{-100}});
  f.set("t.u16", Value{std::uint16_t{60000}});
  f.set("t.i16", Value{std::int16_t{-30000}});
  f.set("t.u32", Value{std::uint32_t{4000000000U}});
  f.set("t.i32", Value{std::int32_t{-2000000000}});
  f.set("t.f32", Value{1.5F});
  f.set("t.bool", Value{true});
  f.set("t.str", Value{std::string("h\xC3\xA9llo\0x", 8)});
  f.set("t.u64", Value{std::numeric_limits<std::uint64_t>::max()});
  f.set("t.i64", Value{std::numeric_limits<std::int64_t>::min()});
  f.set("t.f64", Value{-0.125});
  f.set("t.same_u32", Value{std::uint32_t{7}});
  f.set("t.same_u64", Value{std::uint64_t{7}});
  f.set("a.u8", Value{Array{std::vector<std::uint8_t>{0, 255}}});
  f.set("a.i8", Value{Array{std::vector<std::int8_t>{-128, 127}}});
  f.set("a.u16", Value{Array{std::vector<std::uint16_t>{1, 65535}}});
  f.set("a.i16", Value{Array{std::vector<std::int16_t>{-1, 2}}});
  f.set("a.u32", Value{Array{std::vector<std::uint32_t>{1, 2, 3}}});
  f.set("a.i32", Value{Array{std::vector<std::int32_t>{-1, 6}}});
  f.set("a.f32", Value{Array{std::vector<float>{0.25F, -2.0F}}});
  f.set("a.bool", Value{Array{std::vector<bool>{true, false, true}}});
  f.set("a.str", Value{Array{std::vector<std::string>{"", "a", "\xE2\x96\x81the"}}});
  f.set("a.u64", Value{Array{std::vector<std::uint64_t>{1ULL << 40}}});
  f.set("a.i64", Value{Array{std::vector<std::int64_t>{-(1LL << 40)}}});
  f.set("a.f64", Value{Array{std::vector<double>{1e300}}});
  f.set("a.empty_u64", Value{Array{std::vector<std::uint64_t>{}}});
  f.set("a.nested", Value{Array{std::vector<Array>{Array{std::vector<std::int32_t>{1, 2}},
                                                   Array{std::vector<std::string>{"x"}}}}});
  return f;
}

TEST(GgufRoundTrip, EveryValueTypeKeepsItsTypeAndValue) {
  const GgufFile f = every_value_type();
  const GgufFile back = parse(serialize(f, {}));
  EXPECT_EQ(back.version, 3U);
  ASSERT_EQ(back.metadata.size(), f.metadata.size());
  for (std::size_t i = 0; i < f.metadata.size(); ++i) {
    EXPECT_EQ(back.metadata[i], f.metadata[i]) << f.metadata[i].key;
  }
  EXPECT_EQ(back.find("t.same_u32")->type(), ValueType::uint32);
  EXPECT_EQ(back.find("t.same_u64")->type(), ValueType::uint64);
  const auto& empty = std::get<Array>(back.find("a.empty_u64")->data);
  EXPECT_EQ(empty.element_type(), ValueType::uint64);
  EXPECT_EQ(empty.size(), 0U);
  EXPECT_EQ(std::get<std::string>(back.find("t.str")->data).size(), 8U);
}

TEST(GgufRoundTrip, SerializesTheDocumentedLayoutByteForByte) {
  GgufFile f;
  f.set("a", Value{std::uint16_t{0x0102}});
  f.tensors.push_back(TensorInfo{"t", {2}, GgmlType::f16, 0});
  const Bytes out = serialize(f, {Bytes{0xAA, 0xBB, 0xCC, 0xDD}});
  const Bytes header{'G', 'G', 'U', 'F', 3, 0, 0, 0,       // magic, version
                     1,   0,   0,   0,   0, 0, 0, 0,       // tensor count
                     1,   0,   0,   0,   0, 0, 0, 0,       // kv count
                     1,   0,   0,   0,   0, 0, 0, 0, 'a',  // key
                     2,   0,   0,   0,   2, 1,             // u16 0x0102
                     1,   0,   0,   0,   0, 0, 0, 0, 't',  // tensor name
                     1,   0,   0,   0,                     // n_dims
                     2,   0,   0,   0,   0, 0, 0, 0,       // ne[0]
                     1,   0,   0,   0,                     // f16
                     0,   0,   0,   0,   0, 0, 0, 0};      // offset
  // 72 header bytes padded to 96, then 4 data bytes padded to 32.
  ASSERT_EQ(out.size(), 128U);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 72), header);
  EXPECT_EQ(Bytes(out.begin() + 72, out.begin() + 96), Bytes(24, 0));
  EXPECT_EQ(Bytes(out.begin() + 96, out.begin() + 100), (Bytes{0xAA, 0xBB, 0xCC, 0xDD}));
  EXPECT_EQ(Bytes(out.begin() + 100, out.end()), Bytes(28, 0));
  EXPECT_EQ(parse(out).data_offset, 96U);
}

TEST(GgufRoundTrip, TensorOffsetsFollowInfoOrderPaddedToAlignment) {
  GgufFile f;
  f.tensors.push_back(TensorInfo{"a", {3}, GgmlType::f32, 0});     // 12 bytes
  f.tensors.push_back(TensorInfo{"b", {5, 2}, GgmlType::f16, 0});  // 20 bytes
  f.tensors.push_back(TensorInfo{"c", {64}, GgmlType::q8_0, 0});   // 68 bytes
  assign_offsets(f);
  EXPECT_EQ(f.tensors[0].offset, 0U);
  EXPECT_EQ(f.tensors[1].offset, 32U);
  EXPECT_EQ(f.tensors[2].offset, 64U);
  EXPECT_EQ(data_section_bytes(f), 160U);

  f.set("general.alignment", Value{std::uint32_t{64}});
  assign_offsets(f);
  EXPECT_EQ(f.tensors[1].offset, 64U);
  EXPECT_EQ(f.tensors[2].offset, 128U);
  EXPECT_EQ(data_section_bytes(f), 256U);

  const std::vector<Bytes> data{Bytes(12, 1), Bytes(20, 2), Bytes(68, 3)};
  const Bytes out = serialize(f, data);
  const GgufFile back = parse(out);
  EXPECT_EQ(back.data_offset % 64, 0U);
  EXPECT_EQ(out.size(), back.data_offset + 256);
  EXPECT_EQ(back.tensors, f.tensors);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto got = tensor_data(out, back, i);
    EXPECT_EQ(Bytes(got.begin(), got.end()), data[i]);
  }
}

TEST(GgufRoundTrip, HeaderAloneParsesAsAPrefix) {
  GgufFile f = every_value_type();
  f.tensors.push_back(TensorInfo{"w", {32, 4}, GgmlType::q8_0, 0});
  const Bytes header = serialize_header(f);
  EXPECT_EQ(header.size() % 32, 0U);
  const auto back = parse_header(header);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->metadata, f.metadata);
  EXPECT_EQ(back->tensors, f.tensors);
  EXPECT_EQ(back->data_offset, header.size());
  EXPECT_THROW(parse(header), InputError);  // the 136 data bytes are missing
  EXPECT_TRUE(parse_header(header, header.size() + 136).has_value());
}

TEST(GgufRoundTrip, SerializeRefusesWhatParseWouldReject) {
  GgufFile dup;
  dup.metadata.push_back(KeyValue{"k", Value{std::uint8_t{1}}});
  dup.metadata.push_back(KeyValue{"k", Value{std::uint8_t{2}}});
  EXPECT_THROW(serialize_header(dup), Error);

  GgufFile v2;
  v2.version = 2;
  EXPECT_THROW(serialize_header(v2), Error);

  GgufFile long_name;
  long_name.tensors.push_back(TensorInfo{std::string(64, 'n'), {1}, GgmlType::f32, 0});
  EXPECT_THROW(serialize_header(long_name), Error);

  GgufFile bad_offset;
  bad_offset.tensors.push_back(TensorInfo{"a", {1}, GgmlType::f32, 0});
  bad_offset.tensors.push_back(TensorInfo{"b", {1}, GgmlType::f32, 4});
  EXPECT_THROW(serialize(bad_offset, {Bytes(4), Bytes(4)}), Error);
  EXPECT_THROW(serialize(bad_offset, {Bytes(4)}), Error);
}

TEST(GgufRoundTrip, SetReplacesInPlace) {
  GgufFile f;
  f.set("x", Value{std::uint32_t{1}});
  f.set("y", Value{std::uint32_t{2}});
  f.set("x", Value{std::uint64_t{3}});
  ASSERT_EQ(f.metadata.size(), 2U);
  EXPECT_EQ(f.metadata[0].key, "x");
  EXPECT_EQ(f.metadata[0].value, Value{std::uint64_t{3}});
  EXPECT_EQ(f.find("z"), nullptr);
}

TEST(GgufValues, ToUnsignedAcceptsNonNegativeIntegersOnly) {
  EXPECT_EQ(to_unsigned(Value{std::uint8_t{5}}), 5U);
  EXPECT_EQ(to_unsigned(Value{std::int64_t{9}}), 9U);
  EXPECT_EQ(to_unsigned(Value{std::int32_t{-1}}), std::nullopt);
  EXPECT_EQ(to_unsigned(Value{true}), std::nullopt);
  EXPECT_EQ(to_unsigned(Value{1.0F}), std::nullopt);
  EXPECT_EQ(to_unsigned(Value{std::string("1")}), std::nullopt);
}

TEST(GgufValues, TypeNames) {
  EXPECT_EQ(value_type_name(ValueType::uint32), "u32");
  EXPECT_EQ(value_type_name(ValueType::array), "arr");
  EXPECT_EQ(value_type_name(ValueType::float64), "f64");
  EXPECT_EQ(value_type_name(static_cast<ValueType>(13)), "?");
}

TEST(GgufValues, TensorSizes) {
  EXPECT_EQ(tensor_bytes(TensorInfo{"x", {4096, 2}, GgmlType::q8_0, 0}), 8704U);
  EXPECT_EQ(tensor_bytes(TensorInfo{"x", {}, GgmlType::f32, 0}), 4U);
  EXPECT_EQ(element_count(TensorInfo{"x", {3, 0, 5}, GgmlType::f32, 0}), 0U);
  EXPECT_THROW(tensor_bytes(TensorInfo{"x", {48}, GgmlType::q8_0, 0}), InputError);
  EXPECT_THROW(element_count(TensorInfo{"x", {1ULL << 32, 1ULL << 32}, GgmlType::f32, 0}),
               InputError);
  EXPECT_THROW(tensor_bytes(TensorInfo{"x", {1ULL << 62}, GgmlType::f64, 0}), InputError);
}

}  // namespace
}  // namespace kvbench::gguf
