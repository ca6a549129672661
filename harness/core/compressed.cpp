#include "harness/core/compressed.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <array>
#include <fstream>
#include <istream>
#include <streambuf>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench {
namespace {

// One step of a decoder: input offered and taken, room offered and filled.
struct Step {
  const char* in = nullptr;
  std::size_t in_size = 0;
  std::size_t taken = 0;
  char* out = nullptr;
  std::size_t out_size = 0;
  std::size_t made = 0;
  bool input_ended = false;  // no input follows what is offered
};

// A streaming decoder. step() throws a std::string saying what is wrong with the data.
class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void step(Step& s) = 0;
  // Whether the data so far ends where a compressed stream ends (one may follow: concatenated
  // members, streams and frames are read as one).
  virtual bool at_stream_end() const = 0;
};

class GzipDecoder : public Decoder {
 public:
  GzipDecoder() {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) {
      throw Error("zlib could not start a gzip decoder");
    }
  }
  ~GzipDecoder() override { inflateEnd(&z_); }
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;

  void step(Step& s) override {
    if (ended_ && s.in_size > 0) {
      inflateReset(&z_);  // a further gzip member, as `gzip -d` reads one
      ended_ = false;
    }
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.in));
    z_.avail_in = static_cast<uInt>(s.in_size);
    z_.next_out = reinterpret_cast<Bytef*>(s.out);
    z_.avail_out = static_cast<uInt>(s.out_size);
    const int r = inflate(&z_, Z_NO_FLUSH);
    if (r == Z_STREAM_END) {
      ended_ = true;
    } else if (r != Z_OK && r != Z_BUF_ERROR) {
      throw std::string(z_.msg != nullptr ? z_.msg : "damaged data");
    }
    s.taken = s.in_size - z_.avail_in;
    s.made = s.out_size - z_.avail_out;
  }
  bool at_stream_end() const override { return ended_; }

 private:
  z_stream z_{};
  bool ended_ = false;
};

class XzDecoder : public Decoder {
 public:
  XzDecoder() {
    if (lzma_stream_decoder(&x_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
      throw Error("liblzma could not start an xz decoder");
    }
  }
  ~XzDecoder() override { lzma_end(&x_); }
  XzDecoder(const XzDecoder&) = delete;
  XzDecoder& operator=(const XzDecoder&) = delete;

  void step(Step& s) override {
    x_.next_in = reinterpret_cast<const std::uint8_t*>(s.in);
    x_.avail_in = s.in_size;
    x_.next_out = reinterpret_cast<std::uint8_t*>(s.out);
    x_.avail_out = s.out_size;
    const lzma_ret r = lzma_code(&x_, s.input_ended ? LZMA_FINISH : LZMA_RUN);
    if (r == LZMA_STREAM_END) {
      ended_ = true;
    } else if (r != LZMA_OK && r != LZMA_BUF_ERROR) {
      throw std::string(r == LZMA_DATA_ERROR     ? "damaged data"
                        : r == LZMA_FORMAT_ERROR ? "not xz data"
                        : r == LZMA_MEM_ERROR    ? "out of memory"
                                                 : "damaged data or options");
    }
    s.taken = s.in_size - x_.avail_in;
    s.made = s.out_size - x_.avail_out;
  }
  bool at_stream_end() const override { return ended_; }

 private:
  lzma_stream x_{};
  bool ended_ = false;
};

class ZstdDecoder : public Decoder {
 public:
  ZstdDecoder() : d_(ZSTD_createDStream()) {
    if (d_ == nullptr || ZSTD_isError(ZSTD_initDStream(d_))) {
      ZSTD_freeDStream(d_);
      throw Error("libzstd could not start a zstd decoder");
    }
  }
  ~ZstdDecoder() override { ZSTD_freeDStream(d_); }
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;

  void step(Step& s) override {
    ZSTD_inBuffer in{s.in, s.in_size, 0};
    ZSTD_outBuffer out{s.out, s.out_size, 0};
    const std::size_t r = ZSTD_decompressStream(d_, &out, &in);
    if (ZSTD_isError(r)) {
      throw std::string(ZSTD_getErrorName(r));
    }
    // 0: a frame was decoded and flushed whole; a frame that follows starts afresh.
    if (in.pos > 0 || out.pos > 0) {
      ended_ = r == 0;
    }
    s.taken = in.pos;
    s.made = out.pos;
  }
  bool at_stream_end() const override { return ended_; }

 private:
  ZSTD_DStream* d_;
  bool ended_ = false;
};

std::unique_ptr<Decoder> decoder_for(Compression c) {
  switch (c) {
    case Compression::gzip:
      return std::make_unique<GzipDecoder>();
    case Compression::xz:
      return std::make_unique<XzDecoder>();
    case Compression::zstd:
      return std::make_unique<ZstdDecoder>();
    case Compression::none:
      break;
  }
  return nullptr;
}

// The decompressed bytes of `raw`, read a buffer at a time.
class DecodingBuffer : public std::streambuf {
 public:
  DecodingBuffer(std::ifstream& raw, Compression c, std::string named)
      : raw_(raw), decoder_(decoder_for(c)), compression_(c), named_(std::move(named)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) {
      return traits_type::to_int_type(*gptr());
    }
    std::size_t made = 0;
    while (made == 0) {
      if (in_pos_ == in_size_ && !raw_ended_) {
        raw_.read(in_.data(), static_cast<std::streamsize>(in_.size()));
        in_size_ = static_cast<std::size_t>(raw_.gcount());
        in_pos_ = 0;
        raw_ended_ = in_size_ < in_.size();
      }
      Step s{in_.data() + in_pos_, in_size_ - in_pos_, 0, out_.data(), out_.size(), 0, raw_ended_};
      try {
        decoder_->step(s);
      } catch (const std::string& what) {
        fail(what);
      }
      in_pos_ += s.taken;
      made = s.made;
      const bool input_spent = raw_ended_ && in_pos_ == in_size_;
      if (made == 0 && input_spent) {
        if (!decoder_->at_stream_end()) {
          fail("it ends inside its compressed data (cut short?)");
        }
        return traits_type::eof();
      }
      if (made == 0 && s.taken == 0 && !input_spent && in_pos_ < in_size_) {
        fail("the decoder takes no more of it");
      }
    }
    setg(out_.data(), out_.data(), out_.data() + made);
    return traits_type::to_int_type(*gptr());
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{} ({}): cannot be decompressed: {}", named_,
                                 compression_name(compression_), what));
  }

  std::ifstream& raw_;
  std::unique_ptr<Decoder> decoder_;
  Compression compression_;
  std::string named_;  // the file's role and path: "trace 'x.jsonl.xz'"
  std::array<char, 1 << 16> in_{};
  std::array<char, 1 << 18> out_{};
  std::size_t in_pos_ = 0;
  std::size_t in_size_ = 0;
  bool raw_ended_ = false;
};

}  // namespace

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::gzip:
      return "gzip";
    case Compression::xz:
      return "xz";
    case Compression::zstd:
      return "zstd";
    case Compression::none:
      break;
  }
  return "plain";
}

Compression compression_of(std::string_view start) {
  constexpr std::string_view kGzip("\x1f\x8b", 2);
  constexpr std::string_view kXz(
      "\xfd"
      "7zXZ\0",
      6);
  constexpr std::string_view kZstd("\x28\xb5\x2f\xfd", 4);
  if (start.starts_with(kGzip)) {
    return Compression::gzip;
  }
  if (start.starts_with(kXz)) {
    return Compression::xz;
  }
  if (start.starts_with(kZstd)) {
    return Compression::zstd;
  }
  return Compression::none;
}

struct CompressedInput::Impl {
  std::ifstream raw;
  Compression compression = Compression::none;
  std::unique_ptr<std::streambuf> buffer;
  std::unique_ptr<std::istream> decoded;
};

CompressedInput::CompressedInput(const std::string& path, std::string_view what)
    : impl_(std::make_unique<Impl>()) {
  const std::string named = fmt::format("{} '{}'", what, path);
  impl_->raw.open(path, std::ios::binary);
  if (!impl_->raw) {
    throw InputError(fmt::format("{}: cannot be opened for reading", named));
  }
  std::array<char, 6> start{};
  impl_->raw.read(start.data(), start.size());
  impl_->compression =
      compression_of(std::string_view(start.data(), static_cast<std::size_t>(impl_->raw.gcount())));
  impl_->raw.clear();
  impl_->raw.seekg(0);
  if (impl_->compression != Compression::none) {
    impl_->buffer = std::make_unique<DecodingBuffer>(impl_->raw, impl_->compression, named);
    impl_->decoded = std::make_unique<std::istream>(impl_->buffer.get());
    // What the buffer throws (damaged data) leaves the reads, rather than ending them quietly.
    impl_->decoded->exceptions(std::ios::badbit);
  }
}

CompressedInput::~CompressedInput() = default;

std::istream& CompressedInput::stream() {
  return impl_->decoded ? *impl_->decoded : impl_->raw;
}

Compression CompressedInput::compression() const {
  return impl_->compression;
}

}  // namespace kvbench
