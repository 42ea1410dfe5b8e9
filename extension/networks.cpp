#include "networks.h"

#include <string>
#include <utility>

#include "guard.h"

extern "C" {
#include "executor/spi.h"
}

namespace pgmate::pg {

bool network_exists(std::int64_t id) {
  return pg_call([&] {
    SPI_connect();
    Oid types[1] = {INT8OID};
    Datum values[1] = {Int64GetDatum(id)};
    SPI_execute_with_args("SELECT 1 FROM pgmate.networks WHERE id = $1", 1, types, values, nullptr, true, 1);
    const bool found = SPI_processed == 1;
    SPI_finish();
    return found;
  });
}

std::pair<std::string, std::string> read_network(std::int64_t id) {
  std::pair<std::string, std::string> row;
  bool found = false;
  pg_call([&] {
    SPI_connect();
    Oid types[1] = {INT8OID};
    Datum values[1] = {Int64GetDatum(id)};
    SPI_execute_with_args("SELECT config::text, weights FROM pgmate.networks WHERE id = $1", 1, types, values,
                          nullptr, true, 1);
    if (SPI_processed == 1) {
      bool null_config = false, null_weights = false;
      Datum config = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &null_config);
      Datum weights = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &null_weights);
      if (!null_config && !null_weights) {
        text* c = DatumGetTextPP(config);
        bytea* w = DatumGetByteaPP(weights);
        row.first.assign(VARDATA_ANY(c), VARSIZE_ANY_EXHDR(c));
        row.second.assign(VARDATA_ANY(w), VARSIZE_ANY_EXHDR(w));
        found = true;
      }
    }
    SPI_finish();
  });
  if (!found) throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "network " + std::to_string(id) + " not found in pgmate.networks");
  return row;
}

void load_network_into(worker::WorkerClient& client, std::int64_t id) {
  const auto [config, weights] = read_network(id);
  client.load_network(id, config, weights);
}

}  // namespace pgmate::pg
