// A connection to pgmate-worker for the commands that evaluate networks (selfplay, arena,
// analyse): Ctrl-C reaches it while it waits, and a worker that cannot be reached is an
// error that says how to name one.
#pragma once

#include <memory>
#include <string>

#include "link/worker_client.h"

namespace pgmate::cli {

std::unique_ptr<worker::WorkerClient> connect_worker(const std::string& address);

}  // namespace pgmate::cli
