// The networks pgmate ships: safetensors files installed beside the extension's scripts
// (share/extension/pgmate_NAME.safetensors), read by pgmate.install_network into
// pgmate.networks.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
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
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw pg::SqlError(ERRCODE_UNDEFINED_FILE, "pgmate ships no network " + quote_input(name, 64) + " (no file " +
                                                   path + "; make install puts networks/*.safetensors there)");
  std::string bytes;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0 || std::size_t(size) > kMaxBytes)
    throw pg::SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED, "network file " + path + " is larger than 256 MB");
  bytes.resize(std::size_t(size));
  in.seekg(0);
  in.read(bytes.data(), size);
  if (!in) throw pg::SqlError(ERRCODE_IO_ERROR, "cannot read " + path);
  return pg::pg_call([&] {
    bytea* out = static_cast<bytea*>(palloc(VARHDRSZ + bytes.size()));
    SET_VARSIZE(out, VARHDRSZ + bytes.size());
    std::memcpy(VARDATA(out), bytes.data(), bytes.size());
    return PointerGetDatum(out);
  });
}
