#include "harness/core/compressed.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <istream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Lines enough to need many of the reader's buffers (about 1.3 MB), different from each other.
std::string lines_text() {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += R"({"timestamp": )" + std::to_string(i * 7) + R"(, "input_length": )" +
            std::to_string(1000 + i % 977) + ", \"hash_ids\": [0, " + std::to_string(i) + "]}\n";
  }
  return text;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string xz(const std::string& text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t used = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr,
                                    reinterpret_cast<const std::uint8_t*>(text.data()), text.size(),
                                    reinterpret_cast<std::uint8_t*>(out.data()), &used, out.size()),
            LZMA_OK);
  out.resize(used);
  return out;
}

// With a checksum per frame, as the zstd command writes it: without one, damage inside a frame
// need not be noticed.
std::string zstd(const std::string& text) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), text.data(), text.size());
  ZSTD_freeCCtx(c);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

class Compressed : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kvbench-compressed-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  // What reading `path` whole gives, and the compression it was read as.
  static std::string read_all(const std::string& path, Compression* seen = nullptr) {
    CompressedInput in(path);
    if (seen != nullptr) {
      *seen = in.compression();
    }
    std::string text;
    std::string line;
    while (std::getline(in.stream(), line)) {
      text += line + "\n";
    }
    return text;
  }

  fs::path dir_;
};

TEST_F(Compressed, EachCompressionReadsBackWhatWasWritten) {
  const std::string text = lines_text();
  const std::pair<Compression, std::string> files[] = {{Compression::none, text},
                                                       {Compression::gzip, gzip(text)},
                                                       {Compression::xz, xz(text)},
                                                       {Compression::zstd, zstd(text)}};
  for (const auto& [compression, bytes] : files) {
    // The name says nothing: what the file starts with decides.
    const std::string path = write("t.jsonl", bytes);
    Compression seen = Compression::none;
    EXPECT_EQ(read_all(path, &seen), text) << compression_name(compression);
    EXPECT_EQ(seen, compression);
    EXPECT_LT(bytes.size(), compression == Compression::none ? text.size() + 1 : text.size() / 4);
  }
}

TEST_F(Compressed, ConcatenatedMembersStreamsAndFramesReadAsOne) {
  const std::string a = "first part\n";
  const std::string b = "second part\n";
  EXPECT_EQ(read_all(write("a.gz", gzip(a) + gzip(b))), a + b);
  EXPECT_EQ(read_all(write("a.xz", xz(a) + xz(b))), a + b);
  EXPECT_EQ(read_all(write("a.zst", zstd(a) + zstd(b))), a + b);
}

TEST_F(Compressed, CutShortIsAnInputErrorNamingTheFileAndItsCompression) {
  const std::string text = lines_text();
  const std::pair<std::string, std::string> files[] = {
      {"gzip", gzip(text)}, {"xz", xz(text)}, {"zstd", zstd(text)}};
  for (const auto& [name, bytes] : files) {
    const std::string path = write("cut." + name, bytes.substr(0, bytes.size() * 2 / 3));
    try {
      read_all(path);
      ADD_FAILURE() << name << ": no error for a file cut short";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("(" + name + ")"),
                                  HasSubstr("cannot be decompressed")));
      EXPECT_EQ(e.exit_code(), 2);
    }
  }
}

TEST_F(Compressed, DamagedDataIsAnInputError) {
  const std::string text = lines_text();
  const std::pair<std::string, std::string> files[] = {
      {"gzip", gzip(text)}, {"xz", xz(text)}, {"zstd", zstd(text)}};
  for (auto [name, bytes] : files) {
    for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) {
      bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    }
    const std::string path = write("damaged." + name, bytes);
    EXPECT_THROW(read_all(path), InputError) << name;
  }
}

TEST_F(Compressed, AFileThatCannotBeOpenedIsNamed) {
  const std::string path = (dir_ / "missing.jsonl.zst").string();
  try {
    CompressedInput in(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("cannot be opened")));
  }
}

TEST(CompressionOf, TellsByTheFirstBytes) {
  EXPECT_EQ(compression_of(std::string_view("\x1f\x8b\x08", 3)), Compression::gzip);
  EXPECT_EQ(compression_of(std::string_view("\xfd"
                                            "7zXZ\0",
                                            6)),
            Compression::xz);
  EXPECT_EQ(compression_of(std::string_view("\x28\xb5\x2f\xfd", 4)), Compression::zstd);
  EXPECT_EQ(compression_of("{\"timestamp\": 0"), Compression::none);
  EXPECT_EQ(compression_of(""), Compression::none);
  EXPECT_EQ(compression_of("\x1f"), Compression::none);
}

}  // namespace
}  // namespace kvbench
