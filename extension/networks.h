// Rows of pgmate.networks, read through SPI, for the code that hands networks to
// pgmate-worker (evaluate(), load_network(), CALL pgmate.selfplay).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "client/worker_client.h"

namespace pgmate::pg {

// Whether pgmate.networks has a row with this id.
bool network_exists(std::int64_t id);

// The row's (config as JSON text, weights bytes); a missing row is SqlError 22023
// "network N not found in pgmate.networks".
std::pair<std::string, std::string> read_network(std::int64_t id);

// Reads the row and makes the worker serve it. Worker failures propagate as the
// client's exceptions (wrap the call in with_worker or rethrow_worker_failure).
void load_network_into(worker::WorkerClient& client, std::int64_t id);

}  // namespace pgmate::pg
