// Rows of pgmate.networks, read through SPI with the caller's privileges, for the code that
// hands networks to pgmate-worker (evaluate(), load_network(), CALL pgmate.selfplay). The
// worker knows a network by its key: this database, the row's id and the SHA-256 of its
// weights (the generated column weights_sha256), so a changed row is a new network to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "link/worker_client.h"
#include "link/worker_evaluator.h"

namespace pgmate::pg {

struct NetworkRow {
  worker::NetworkKey key;
  std::string config;   // JSON text
  std::string weights;  // safetensors bytes
};

// The key of network `id` as the row is now. Reading it checks that the caller may read
// pgmate.networks (42501 otherwise); a missing row is 22023 "network N not found in
// pgmate.networks", a non-positive id 22023 too.
worker::NetworkKey network_key(std::int64_t id);

// The whole row, with the same checks.
NetworkRow read_network(std::int64_t id);

// Reads row `key.id` and hands it to the worker. When the row no longer has the key's
// weights (it was updated), `fail_if_changed` makes that a 22023 error; otherwise the row
// as it is now is loaded. Worker failures propagate as the client's exceptions (wrap the
// call in with_worker or rethrow_worker_failure).
void load_network_into(worker::WorkerClient& client, const worker::NetworkKey& key,
                       bool fail_if_changed);

// An evaluator of network `id` on this backend's worker, for a search that runs here
// (self-play, arena, a network's analysis). Reading the row checks the caller may read it;
// the worker is connected now, so one that is down fails the call before any work; the
// search uses this version of the row throughout (`key`, when given, gets its key).
std::unique_ptr<worker::WorkerEvaluator> network_evaluator(std::int64_t id, worker::NetworkKey* key = nullptr);

// The search trees live in this backend: 54000 before anything is built when `need` bytes
// are more than pgmate.selfplay_tree_memory. The message reads "<what> about N MB, more
// than pgmate.selfplay_tree_memory (M MB): <advice>, or raise the setting".
void check_tree_memory(std::size_t need, const std::string& what, const std::string& advice);

}  // namespace pgmate::pg
