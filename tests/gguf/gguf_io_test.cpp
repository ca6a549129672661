#include "harness/gguf/gguf_io.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"
#include "harness/gguf/synth.h"

namespace kvbench::gguf {
namespace {

using Bytes = std::vector<std::uint8_t>;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("kvbench-gguf-io-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
          "-" + name);
}

void write_file(const fs::path& p, const Bytes& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

Bytes read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string header_error(const fs::path& p) {
  try {
    read_gguf_header(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ReadGgufHeader, MatchesAFullParse) {
  const fs::path p = temp_path("tiny.gguf");
  write_synthetic_model(p, preset_shape("tiny").value(), GgmlType::f16, 3);
  const Bytes all = read_bytes(p);
  const GgufHeader h = read_gguf_header(p);
  EXPECT_EQ(h.file_bytes, all.size());
  const GgufFile full = parse(all);
  EXPECT_EQ(h.file.metadata, full.metadata);
  EXPECT_EQ(h.file.tensors, full.tensors);
  EXPECT_EQ(h.file.data_offset, full.data_offset);
  fs::remove(p);
}

TEST(ReadGgufHeader, ReadsMoreWhenTheMetadataIsLarge) {
  GgufFile f;
  f.set("big", Value{std::string(3 << 20, 'x')});  // past the first 1 MiB and 2 MiB prefixes
  f.tensors.push_back(TensorInfo{"t", {8}, GgmlType::f32, 0});
  const fs::path p = temp_path("big.gguf");
  write_file(p, serialize(f, {Bytes(32, 5)}));
  const GgufHeader h = read_gguf_header(p);
  EXPECT_EQ(h.file.metadata, f.metadata);
  EXPECT_EQ(h.file.tensors, f.tensors);
  fs::remove(p);
}

TEST(ReadGgufHeader, ErrorsNameTheFile) {
  const fs::path missing = temp_path("missing.gguf");
  EXPECT_THAT(header_error(missing), HasSubstr("cannot read GGUF file '" + missing.string()));

  const fs::path p = temp_path("cut.gguf");
  GgufFile f;
  f.tensors.push_back(TensorInfo{"t", {8}, GgmlType::f32, 0});
  Bytes b = serialize(f, {Bytes(32, 5)});
  b.resize(b.size() - 1);
  write_file(p, b);
  EXPECT_THAT(header_error(p), HasSubstr("'" + p.string() + "': truncated GGUF file"));
  write_file(p, Bytes{'P', 'K', 3, 4});
  EXPECT_EQ(header_error(p),
            "'" + p.string() + "': not a GGUF file (the first 4 bytes are not \"GGUF\")");
  fs::remove(p);
}

TEST(AtomicFileWriter, OnlyCommittedFilesAppear) {
  const fs::path p = temp_path("atomic.bin");
  {
    AtomicFileWriter w(p);
    w.write(Bytes{1, 2, 3});
    w.write_zeros(5000);
    EXPECT_EQ(w.size(), 5003U);
    EXPECT_FALSE(fs::exists(p));
  }
  EXPECT_FALSE(fs::exists(p));
  {
    AtomicFileWriter w(p);
    w.write(Bytes{9});
    w.commit();
  }
  EXPECT_EQ(read_bytes(p), Bytes{9});
  fs::remove(p);
  EXPECT_THROW(AtomicFileWriter(temp_path("no-such-dir") / "x"), Error);
}

}  // namespace
}  // namespace kvbench::gguf
