#include "networks.h"

#include <cstring>
#include <string>

#include "guard.h"
#include "worker_link.h"

extern "C" {
#include "executor/spi.h"
#include "miscadmin.h"
}

namespace pgmate::pg {

namespace {

void check_id(std::int64_t id) {
  if (id <= 0) throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "network id " + std::to_string(id) + " is not positive");
}

[[noreturn]] void not_found(std::int64_t id) {
  throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "network " + std::to_string(id) + " not found in pgmate.networks");
}

std::string bytes_of(Datum d) {
  bytea* b = DatumGetByteaPP(d);
  return std::string(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
}

// Runs `query` with $1 = id; `read` sees the one row (with SPI connected), or is not
// called when there is none. The query runs as the calling role: its privileges apply.
template <class Read>
bool select_network(const char* query, std::int64_t id, Read read) {
  bool found = false;
  pinned_sql([&] {
    SPI_connect();
    Oid types[1] = {INT8OID};
    Datum values[1] = {Int64GetDatum(id)};
    SPI_execute_with_args(query, 1, types, values, nullptr, true, 1);
    if (SPI_processed == 1) {
      found = true;
      read(SPI_tuptable->vals[0], SPI_tuptable->tupdesc);
    }
    SPI_finish();
  });
  return found;
}

worker::NetworkKey key_of(std::int64_t id, const std::string& sha256) {
  worker::NetworkKey key;
  key.database = MyDatabaseId;
  key.id = id;
  if (sha256.size() != key.sha256.size())
    throw SqlError(ERRCODE_DATA_CORRUPTED, "network " + std::to_string(id) + " has no valid weights_sha256");
  std::memcpy(key.sha256.data(), sha256.data(), key.sha256.size());
  return key;
}

}  // namespace

worker::NetworkKey network_key(std::int64_t id) {
  check_id(id);
  std::string sha256;
  const bool found = select_network("SELECT weights_sha256 FROM pgmate.networks WHERE id = $1", id,
                                    [&](HeapTuple row, TupleDesc desc) {
                                      bool null = false;
                                      Datum d = SPI_getbinval(row, desc, 1, &null);
                                      if (!null) sha256 = bytes_of(d);
                                    });
  if (!found) not_found(id);
  return key_of(id, sha256);
}

NetworkRow read_network(std::int64_t id) {
  check_id(id);
  NetworkRow out;
  std::string sha256;
  const bool found = select_network(
      "SELECT config::text, weights, weights_sha256 FROM pgmate.networks WHERE id = $1", id,
      [&](HeapTuple row, TupleDesc desc) {
        bool null[3] = {false, false, false};
        Datum config = SPI_getbinval(row, desc, 1, &null[0]);
        Datum weights = SPI_getbinval(row, desc, 2, &null[1]);
        Datum hash = SPI_getbinval(row, desc, 3, &null[2]);
        if (!null[0]) {
          text* c = DatumGetTextPP(config);
          out.config.assign(VARDATA_ANY(c), VARSIZE_ANY_EXHDR(c));
        }
        if (!null[1]) out.weights = bytes_of(weights);
        if (!null[2]) sha256 = bytes_of(hash);
      });
  if (!found) not_found(id);
  out.key = key_of(id, sha256);
  return out;
}

void load_network_into(worker::WorkerClient& client, const worker::NetworkKey& key, bool fail_if_changed) {
  const NetworkRow row = read_network(key.id);
  if (fail_if_changed && !(row.key == key))
    throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                   "network " + std::to_string(key.id) + " changed while in use (its weights were updated)");
  client.load_network(row.key, row.config, row.weights);
}

std::unique_ptr<worker::WorkerEvaluator> network_evaluator(std::int64_t id, worker::NetworkKey* key) {
  const worker::NetworkKey row_key = network_key(id);
  worker::WorkerClient* client = nullptr;
  try {
    client = &worker_client();
  } catch (...) {
    rethrow_worker_failure();
  }
  if (key) *key = row_key;
  return std::make_unique<worker::WorkerEvaluator>(
      *client, row_key, [client](const worker::NetworkKey& k) { load_network_into(*client, k, true); });
}

void check_tree_memory(std::size_t need, const std::string& what, const std::string& advice) {
  if (need <= std::size_t(selfplay_tree_memory_mb) << 20) return;
  throw SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED, what + " about " + std::to_string(need >> 20) +
                                                     " MB, more than pgmate.selfplay_tree_memory (" +
                                                     std::to_string(selfplay_tree_memory_mb) + " MB): " + advice +
                                                     ", or raise the setting");
}

}  // namespace pgmate::pg
