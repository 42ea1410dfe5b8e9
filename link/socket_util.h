// Small POSIX socket helpers shared by the worker and its client: addresses, an owning
// file descriptor, and errno text. No PostgreSQL, no Torch.
#pragma once

#include <cstdint>
#include <string>

namespace pgmate::worker {

// A worker address: a Unix socket path, or "tcp://host:port".
struct Address {
  bool tcp = false;
  std::string path;           // Unix
  std::string host;           // TCP ("127.0.0.1", "::1", "localhost", ...)
  std::uint16_t port = 0;     // TCP
  std::string display() const;  // as the user wrote it, for messages
};

// Parses "tcp://host:port", "tcp://[::1]:port" or a Unix socket path; throws
// std::invalid_argument with a clear message.
Address parse_address(const std::string& text);

// Parses "host:port", "[v6]:port" or just "port" (host then defaults to `default_host`),
// as given to --tcp. Port 0 asks for an ephemeral port.
Address parse_host_port(const std::string& text, const std::string& default_host = "127.0.0.1");

// strerror text for an errno value (thread-safe).
std::string errno_text(int err);

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

bool set_nonblocking(int fd, bool on = true);

// Compares two secrets in time that depends only on the expected secret's length.
bool constant_time_equal(const std::string& given, const std::string& expected);

}  // namespace pgmate::worker
