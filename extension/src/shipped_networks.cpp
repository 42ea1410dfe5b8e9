// The networks pgmate ships: safetensors files installed beside the extension's scripts
// (share/extension/pgmate_NAME.safetensors), read by pgmate.install_network into
// pgmate.networks.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <cerrno>
#include <cstdint>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <iterator>
#include <string>

#include "common/text.h"
#include "datum.h"

extern "C" {
#include "miscadmin.h"
#include "port.h"
}

using namespace pgmate;

namespace {

constexpr std::size_t kMaxBytes = std::size_t(256) << 20;  // a shipped network is a few MB

}  // namespace

// pgmate.shipped_network(name text) -> bytea: the weights file pgmate_NAME.safetensors of the
// extension's share folder. NAME: 1 to 64 lowercase letters, digits and underscores.
PGMATE_FUNCTION(shipped_network_file) {
  const std::string name = pg::text_arg(fcinfo, 0);
  const bool plain = !name.empty() && name.size() <= 64 &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                     });
  if (!plain)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "network name " + quote_input(name, 64) +
                           " must be 1 to 64 lowercase letters, digits and underscores, such as 'default'");
  char share[MAXPGPATH];
  pg::pg_call([&] { get_share_path(my_exec_path, share); });
  const std::string path = std::string(share) + "/extension/pgmate_" + name + ".safetensors";
  // A regular file of the share folder, never what a symlink points at, nor a folder or a
  // FIFO (O_NONBLOCK: opening one never waits for a writer).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw pg::SqlError(ERRCODE_UNDEFINED_FILE,
                       errno == ELOOP ? "network file " + path + " is a symbolic link: pgmate reads only regular files"
                                      : "pgmate ships no network " + quote_input(name, 64) + " (no file " + path +
                                            "; make install puts networks/*.safetensors there)");
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw pg::SqlError(ERRCODE_UNDEFINED_FILE, "network file " + path + " is not a regular file");
  if (std::uint64_t(st.st_size) > kMaxBytes)
    throw pg::SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED, "network file " + path + " is larger than 256 MB");
  std::string bytes(std::size_t(st.st_size), '\0');
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw pg::SqlError(ERRCODE_IO_ERROR, "cannot read " + path);
    done += std::size_t(n);
  }
  return pg::pg_call([&] {
    bytea* out = static_cast<bytea*>(palloc(VARHDRSZ + bytes.size()));
    SET_VARSIZE(out, VARHDRSZ + bytes.size());
    std::memcpy(VARDATA(out), bytes.data(), bytes.size());
    return PointerGetDatum(out);
  });
}
