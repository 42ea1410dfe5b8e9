#include "link/socket_util.h"

#include <fcntl.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace pgmate::worker {

std::string Address::display() const {
  if (!tcp) return path;
  if (host.find(':') != std::string::npos) return "tcp://[" + host + "]:" + std::to_string(port);
  return "tcp://" + host + ":" + std::to_string(port);
}

namespace {

std::uint16_t parse_port(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("bad port \"" + text + "\" in \"" + whole + "\"");
  const unsigned long v = std::stoul(text);
  if (v > 65535) throw std::invalid_argument("port " + text + " out of range in \"" + whole + "\"");
  return std::uint16_t(v);
}

}  // namespace

Address parse_host_port(const std::string& text, const std::string& default_host) {
  Address a;
  a.tcp = true;
  if (text.empty()) throw std::invalid_argument("empty TCP address");
  if (text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw std::invalid_argument("bad TCP address \"" + text + "\" (expected [v6-address]:port)");
    a.host = text.substr(1, close - 1);
    a.port = parse_port(text.substr(close + 2), text);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) {
      a.host = default_host;
      a.port = parse_port(text, text);
    } else {
      if (text.find(':') != colon)
        throw std::invalid_argument("bad TCP address \"" + text + "\" (write IPv6 addresses as [addr]:port)");
      a.host = colon == 0 ? default_host : text.substr(0, colon);
      a.port = parse_port(text.substr(colon + 1), text);
    }
  }
  if (a.host.empty()) throw std::invalid_argument("bad TCP address \"" + text + "\" (empty host)");
  return a;
}

Address parse_address(const std::string& text) {
  static constexpr std::string_view kTcp = "tcp://";
  if (text.empty()) throw std::invalid_argument("empty worker address");
  if (text.compare(0, kTcp.size(), kTcp) == 0) {
    Address a = parse_host_port(text.substr(kTcp.size()));
    if (text.find(':', kTcp.size()) == std::string::npos)
      throw std::invalid_argument("bad worker address \"" + text + "\" (expected tcp://host:port)");
    if (a.port == 0) throw std::invalid_argument("bad worker address \"" + text + "\" (port 0)");
    return a;
  }
  if (text.find("://") != std::string::npos)
    throw std::invalid_argument("unsupported worker address \"" + text + "\" (a socket path or tcp://host:port)");
  Address a;
  a.path = text;
  if (a.path.size() >= sizeof(sockaddr_un{}.sun_path))
    throw std::invalid_argument("socket path \"" + text + "\" is too long (at most " +
                                std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes)");
  return a;
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns a char* that may or may not point into buf.
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(err, buf, sizeof buf);
#else
  if (strerror_r(err, buf, sizeof buf) != 0) return "error " + std::to_string(err);
  return buf;
#endif
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool set_nonblocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0) return false;
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  return fcntl(fd, F_SETFL, flags) == 0;
}

bool constant_time_equal(const std::string& given, const std::string& expected) {
  volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | (g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

}  // namespace pgmate::worker
