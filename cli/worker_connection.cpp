#include "worker_connection.h"

#include <cstdlib>
#include <stdexcept>

#include "interrupt.h"
#include "selfplay_store.h"

namespace pgmate::cli {

std::unique_ptr<worker::WorkerClient> connect_worker(const std::string& address) {
  worker::ClientOptions co;
  co.address = address;
  if (const char* token = std::getenv("PGMATE_WORKER_TOKEN")) co.token = token;  // TCP workers need it
  co.poll = [] { stop_if_interrupted(); };
  try {
    return std::make_unique<worker::WorkerClient>(co);
  } catch (const worker::WorkerUnavailable& e) {
    throw std::runtime_error("cannot reach pgmate-worker at " + address + ": " + e.what() + "; " + kWorkerHint);
  }
}

}  // namespace pgmate::cli
