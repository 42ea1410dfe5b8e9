// The backend's connection to pgmate-worker, and the settings that locate it.
#pragma once

#include <string>

#include "link/worker_client.h"

namespace pgmate::pg {

// Settings (GUCs), defined in _PG_init.
extern char* worker_socket_setting;   // pgmate.worker_socket: '' = <data dir>/pgmate_worker.sock
extern char* worker_command_setting;  // pgmate.worker_command: '' = pgmate-worker beside postgres
extern char* worker_device_setting;   // pgmate.worker_device: auto, cpu, cuda
extern int worker_precision_setting;  // pgmate.worker_precision: an index of kWorkerPrecisions
inline constexpr const char* kWorkerPrecisions[] = {"auto", "fp32", "bf16", "fp16"};
extern int worker_encode_setting;  // pgmate.worker_encode: an index of kWorkerEncodings
inline constexpr const char* kWorkerEncodings[] = {"auto", "host", "device"};
extern int worker_timeout_ms;         // pgmate.worker_timeout
extern int worker_network_memory_mb;  // pgmate.worker_network_memory: the worker's --network-memory-mb
extern int worker_perft_max_depth;    // pgmate.worker_perft_max_depth
extern int worker_checkers_perft_max_depth;  // pgmate.worker_checkers_perft_max_depth
extern int selfplay_tree_memory_mb;   // pgmate.selfplay_tree_memory
extern char* eval_writers_setting;    // pgmate.eval_writers (analysis.cpp)

std::string worker_socket_path();

// The worker is shared by every session: how deep one session's perft may go there is the
// superuser's call. 54000 (program_limit_exceeded) above the setting.
void check_worker_perft_depth(int depth, bool checkers);
std::string worker_command_path();

// The worker client of this backend, connected on first use and after a failure. Worker
// failures become SqlErrors with SQLSTATE 08006 (connection_failure) naming the socket;
// errors the worker reports become 22023 or XX000. While waiting, query cancel and
// statement_timeout are honoured.
template <class F>
auto with_worker(F&& f) -> decltype(f(std::declval<worker::WorkerClient&>()));

worker::WorkerClient& worker_client();
void forget_worker_client();
[[noreturn]] void rethrow_worker_failure();  // call inside a catch block

template <class F>
auto with_worker(F&& f) -> decltype(f(std::declval<worker::WorkerClient&>())) {
  try {
    return f(worker_client());
  } catch (...) {
    rethrow_worker_failure();
  }
}

}  // namespace pgmate::pg
