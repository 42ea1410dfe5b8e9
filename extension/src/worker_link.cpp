#include "worker_link.h"

#include <memory>
#include <string>

#include "guard.h"

extern "C" {
#include "utils/guc.h"
}

namespace pgmate::pg {

char* worker_socket_setting = nullptr;
char* worker_command_setting = nullptr;
char* worker_device_setting = nullptr;
int worker_precision_setting = 0;
int worker_encode_setting = 0;
int worker_timeout_ms = 60000;
int worker_network_memory_mb = 2048;
int worker_perft_max_depth = 10;
int worker_checkers_perft_max_depth = 16;
int selfplay_tree_memory_mb = 1024;

namespace {
std::unique_ptr<worker::WorkerClient> g_client;
std::string g_client_address;
}  // namespace

std::string worker_socket_path() {
  if (worker_socket_setting && *worker_socket_setting) return worker_socket_setting;
  return std::string(DataDir) + "/pgmate_worker.sock";
}

std::string worker_command_path() {
  if (worker_command_setting && *worker_command_setting) return worker_command_setting;
  // Beside the postgres binary (make install puts it there).
  std::string exec = my_exec_path;
  return exec.substr(0, exec.rfind('/') + 1) + "pgmate-worker";
}

void check_worker_perft_depth(int depth, bool checkers) {
  const int limit = checkers ? worker_checkers_perft_max_depth : worker_perft_max_depth;
  if (depth > limit)
    throw SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                   std::string(checkers ? "checkers " : "") + "perft depth " + std::to_string(depth) +
                       " on pgmate-worker exceeds " +
                       (checkers ? "pgmate.worker_checkers_perft_max_depth (" : "pgmate.worker_perft_max_depth (") +
                       std::to_string(limit) + "); run it with device 'cpu' or ask a superuser to raise the setting");
}

worker::WorkerClient& worker_client() {
  const std::string address = worker_socket_path();
  if (g_client && g_client_address == address) return *g_client;
  worker::ClientOptions options;
  options.address = address;
  options.request_timeout = std::chrono::milliseconds(worker_timeout_ms);
  options.connect_timeout = std::chrono::milliseconds(std::min(worker_timeout_ms, 2000));
  options.poll = [] { check_for_interrupts(); };
  g_client = std::make_unique<worker::WorkerClient>(options);
  g_client_address = address;
  return *g_client;
}

void forget_worker_client() {
  g_client.reset();
  g_client_address.clear();
}

void rethrow_worker_failure() {
  try {
    throw;
  } catch (const worker::WorkerUnavailable& e) {
    forget_worker_client();
    throw SqlError(ERRCODE_CONNECTION_FAILURE,
                   std::string("pgmate worker unavailable: ") + e.what() +
                       " (is shared_preload_libraries = 'pgmate' set, or pgmate-worker running on that socket?)");
  } catch (const worker::WorkerError& e) {
    throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string("pgmate worker: ") + e.what());
  } catch (const PgError&) {
    // Cancelled while waiting: the connection is in an unknown state.
    forget_worker_client();
    throw;
  }
}

}  // namespace pgmate::pg
