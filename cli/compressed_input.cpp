#include "compressed_input.h"

#include <bzlib.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pgmate::cli {

namespace {

constexpr std::size_t kInputChunk = 1 << 20;

}  // namespace

// Turns input bytes into output bytes. decode() consumes from `in` (setting `used`) and
// writes at most `n` bytes to `out`, returning how many; mid_frame() says whether the
// stream would end inside a frame or member if the input ended here.
struct CompressedInput::Decoder {
  virtual ~Decoder() = default;
  virtual const char* format() const = 0;
  virtual std::size_t decode(const char* in, std::size_t size, std::size_t& used, char* out, std::size_t n) = 0;
  virtual bool mid_frame() const = 0;
};

namespace {

using Decoder = CompressedInput::Decoder;

struct Plain : Decoder {
  const char* format() const override { return "plain"; }
  std::size_t decode(const char* in, std::size_t size, std::size_t& used, char* out, std::size_t n) override {
    used = std::min(size, n);
    std::memcpy(out, in, used);
    return used;
  }
  bool mid_frame() const override { return false; }
};

struct Zstd : Decoder {
  ZSTD_DStream* stream = ZSTD_createDStream();
  bool in_frame = false;  // bytes of a frame taken, and the frame not yet ended and flushed
  Zstd() {
    if (!stream) throw std::runtime_error("out of memory for a zstd stream");
  }
  ~Zstd() override { ZSTD_freeDStream(stream); }
  const char* format() const override { return "zstd"; }
  std::size_t decode(const char* in, std::size_t size, std::size_t& used, char* out, std::size_t n) override {
    used = 0;
    if (size == 0 && !in_frame) return 0;
    ZSTD_inBuffer input{in, size, 0};
    ZSTD_outBuffer output{out, n, 0};
    const std::size_t rc = ZSTD_decompressStream(stream, &output, &input);
    if (ZSTD_isError(rc)) throw std::runtime_error(ZSTD_getErrorName(rc));
    used = input.pos;
    if (rc == 0) in_frame = false;  // a frame decoded and flushed
    else if (used > 0) in_frame = true;
    return output.pos;
  }
  bool mid_frame() const override { return in_frame; }
};

struct Gzip : Decoder {
  z_stream zs{};
  bool in_member = false;
  Gzip() {
    if (inflateInit2(&zs, 15 + 16) != Z_OK) throw std::runtime_error("out of memory for a gzip stream");
  }
  ~Gzip() override { inflateEnd(&zs); }
  const char* format() const override { return "gzip"; }
  std::size_t decode(const char* in, std::size_t size, std::size_t& used, char* out, std::size_t n) override {
    used = 0;
    if (!in_member && size == 0) return 0;
    if (!in_member) {  // the next member of a concatenation
      inflateReset(&zs);
      in_member = true;
    }
    const uInt in_size = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    const uInt out_size = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
    zs.avail_in = in_size;
    zs.next_out = reinterpret_cast<Bytef*>(out);
    zs.avail_out = out_size;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    used = in_size - zs.avail_in;
    const std::size_t produced = out_size - zs.avail_out;
    if (rc == Z_STREAM_END) in_member = false;
    else if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw std::runtime_error(zs.msg ? zs.msg : "inflate failed (" + std::to_string(rc) + ")");
    return produced;
  }
  bool mid_frame() const override { return in_member; }
};

struct Bzip2 : Decoder {
  bz_stream bs{};
  bool open = false, in_stream = false;
  void begin() {
    bs = bz_stream{};
    if (BZ2_bzDecompressInit(&bs, 0, 0) != BZ_OK) throw std::runtime_error("out of memory for a bzip2 stream");
    open = true;
  }
  Bzip2() { begin(); }
  ~Bzip2() override {
    if (open) BZ2_bzDecompressEnd(&bs);
  }
  const char* format() const override { return "bzip2"; }
  std::size_t decode(const char* in, std::size_t size, std::size_t& used, char* out, std::size_t n) override {
    used = 0;
    if (!in_stream && size == 0) return 0;
    if (!in_stream) {  // the next stream of a concatenation
      if (open) BZ2_bzDecompressEnd(&bs);
      open = false;
      begin();
      in_stream = true;
    }
    const unsigned in_size = static_cast<unsigned>(std::min<std::size_t>(size, 1u << 30));
    const unsigned out_size = static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30));
    bs.next_in = const_cast<char*>(in);
    bs.avail_in = in_size;
    bs.next_out = out;
    bs.avail_out = out_size;
    const int rc = BZ2_bzDecompress(&bs);
    used = in_size - bs.avail_in;
    if (rc == BZ_STREAM_END) in_stream = false;
    else if (rc != BZ_OK) throw std::runtime_error("the data is not valid bzip2 (error " + std::to_string(rc) + ")");
    return out_size - bs.avail_out;
  }
  bool mid_frame() const override { return in_stream; }
};

}  // namespace

CompressedInput::CompressedInput(std::FILE* file, std::string name)
    : file_(file), name_(std::move(name)), in_(kInputChunk) {
  while (in_end_ < 4 && fill()) {
  }
  const auto* b = reinterpret_cast<const unsigned char*>(in_.data());
  const std::size_t have = in_end_;
  if (have >= 4 && b[0] == 0x28 && b[1] == 0xB5 && b[2] == 0x2F && b[3] == 0xFD) decoder_ = std::make_unique<Zstd>();
  else if (have >= 2 && b[0] == 0x1F && b[1] == 0x8B) decoder_ = std::make_unique<Gzip>();
  else if (have >= 3 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h') decoder_ = std::make_unique<Bzip2>();
  else decoder_ = std::make_unique<Plain>();
}

CompressedInput::~CompressedInput() = default;

const char* CompressedInput::format() const { return decoder_->format(); }

bool CompressedInput::fill() {
  if (file_ended_) return false;
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
  if (in_end_ == in_.size()) return true;  // full: decode first
  const std::size_t n = std::fread(in_.data() + in_end_, 1, in_.size() - in_end_, file_);
  if (n == 0) {
    if (std::ferror(file_)) throw std::runtime_error("error reading " + name_ + ": " + std::strerror(errno));
    file_ended_ = true;
    return false;
  }
  in_end_ += n;
  file_read_ += n;
  return true;
}

std::size_t CompressedInput::read(char* out, std::size_t n) {
  if (n == 0) return 0;
  for (int idle = 0;;) {
    if (in_pos_ == in_end_ && !file_ended_) fill();
    std::size_t used = 0, produced = 0;
    try {
      produced = decoder_->decode(in_.data() + in_pos_, in_end_ - in_pos_, used, out, n);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("cannot decompress " + name_ + " (" + decoder_->format() + "): " + e.what());
    }
    in_pos_ += used;
    if (produced) return produced;
    if (in_pos_ == in_end_) {
      if (file_ended_) {
        if (decoder_->mid_frame())
          throw std::runtime_error("cannot decompress " + name_ + " (" + decoder_->format() +
                                   "): the file ends inside a compressed frame (truncated?)");
        return 0;
      }
      fill();
    } else if (used == 0 && ++idle > 2) {
      // Input left that the decoder takes nothing of, with room to write: not its format.
      throw std::runtime_error("cannot decompress " + name_ + " (" + decoder_->format() + "): data it cannot read");
    }
  }
}

}  // namespace pgmate::cli
