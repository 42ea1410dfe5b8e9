// A file or pipe read as a stream of bytes, decompressed on the way when it is zstd, gzip
// or bzip2: what lichess's database ships (.pgn.zst) and what other archives use. The
// format is told by the first bytes, as zcat does, whatever the file is called, so standard
// input works the same; anything else is read as it is. Concatenated frames or members (as
// pzstd, pigz and pbzip2 write them) are read one after the other.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace pgmate::cli {

class CompressedInput {
 public:
  // `name` is what messages call the input ("\"games.pgn.zst\"", "standard input").
  CompressedInput(std::FILE* file, std::string name);
  ~CompressedInput();
  CompressedInput(const CompressedInput&) = delete;
  CompressedInput& operator=(const CompressedInput&) = delete;

  // Up to `n` bytes of the decompressed stream into `out`; 0 at its end. Throws
  // std::runtime_error naming the input and the format when the stream is corrupt or ends
  // inside a frame, or the file cannot be read.
  std::size_t read(char* out, std::size_t n);

  const char* format() const;            // "zstd", "gzip", "bzip2" or "plain"
  std::uint64_t file_bytes_read() const { return file_read_; }  // for progress against the file's size

  struct Decoder;  // one per format (compressed_input.cpp)

 private:
  bool fill();  // more of the file into in_; false at its end

  std::FILE* file_;
  std::string name_;
  std::vector<char> in_;
  std::size_t in_pos_ = 0, in_end_ = 0;
  bool file_ended_ = false;
  std::uint64_t file_read_ = 0;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace pgmate::cli
