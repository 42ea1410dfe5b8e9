// Module start-up: settings, and (with shared_preload_libraries = 'pgmate') a background
// worker that starts pgmate-worker, restarts it when it dies and stops it with the server.
//
// The supervisor is plain PostgreSQL C code: it holds no C++ objects, so its ereports and
// signal handling follow the usual rules.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "guard.h"
#include "position_counts.h"
#include "position_index.h"
#include "training_rows.h"
#include "worker_link.h"

extern "C" {
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"

PGDLLEXPORT void _PG_init(void);
PGDLLEXPORT void pgmate_supervisor_main(Datum);
}

namespace {

// Shared with backends: the worker's pid (0 when not running) and how often it started.
struct SupervisorState {
  pid_t worker_pid;
  int starts;
  TimestampTz last_start;
};
SupervisorState* g_state = nullptr;
shmem_request_hook_type g_prev_shmem_request = nullptr;
shmem_startup_hook_type g_prev_shmem_startup = nullptr;
bool g_autostart = true;

void request_shmem() {
  if (g_prev_shmem_request) g_prev_shmem_request();
  RequestAddinShmemSpace(MAXALIGN(sizeof(SupervisorState)));
}

void startup_shmem() {
  if (g_prev_shmem_startup) g_prev_shmem_startup();
  bool found = false;
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  g_state = static_cast<SupervisorState*>(ShmemInitStruct("pgmate supervisor", sizeof(SupervisorState), &found));
  if (!found) {
    g_state->worker_pid = 0;
    g_state->starts = 0;
    g_state->last_start = 0;
  }
  LWLockRelease(AddinShmemInitLock);
}

volatile sig_atomic_t g_stop = false;
void on_sigterm(SIGNAL_ARGS) {
  int saved = errno;
  g_stop = true;
  SetLatch(MyLatch);
  errno = saved;
}

pid_t start_worker() {
  const std::string command = pgmate::pg::worker_command_path();
  const std::string socket = pgmate::pg::worker_socket_path();
  const char* device = pgmate::pg::worker_device_setting ? pgmate::pg::worker_device_setting : "auto";
  if (access(command.c_str(), X_OK) != 0) {
    ereport(WARNING, (errmsg("pgmate: cannot start worker: %s is not an executable (set pgmate.worker_command)",
                             command.c_str())));
    return 0;
  }
  pid_t pid = fork();
  if (pid < 0) {
    ereport(WARNING, (errmsg("pgmate: fork failed: %m")));
    return 0;
  }
  if (pid == 0) {
    // The worker goes when the supervisor goes, whatever the reason.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    // Signals blocked in the postmaster's children must not stay blocked in the worker.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    const std::string memory = std::to_string(pgmate::pg::worker_network_memory_mb);
    const char* precision = pgmate::pg::kWorkerPrecisions[pgmate::pg::worker_precision_setting];
    const char* encode = pgmate::pg::kWorkerEncodings[pgmate::pg::worker_encode_setting];
    execl(command.c_str(), command.c_str(), "--socket", socket.c_str(), "--device", device, "--precision", precision,
          "--encode", encode, "--network-memory-mb", memory.c_str(), (char*)nullptr);
    _exit(127);
  }
  ereport(LOG, (errmsg("pgmate: started worker %s (pid %d) on %s", command.c_str(), int(pid), socket.c_str())));
  return pid;
}

void stop_worker(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {  // up to 5 s, then force
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    pg_usleep(100000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

void pgmate_supervisor_main(Datum) {
  pqsignal(SIGTERM, on_sigterm);
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  BackgroundWorkerUnblockSignals();

  pid_t child = 0;
  long backoff_ms = 0;
  TimestampTz next_start = 0;
  while (!g_stop) {
    if (ConfigReloadPending) {
      ConfigReloadPending = false;
      ProcessConfigFile(PGC_SIGHUP);
    }
    if (child > 0) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        ereport(LOG, (errmsg("pgmate: worker (pid %d) exited with %s %d; restarting", int(child),
                             WIFSIGNALED(status) ? "signal" : "status",
                             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status))));
        child = 0;
        g_state->worker_pid = 0;
        // Restart after half a second, slowing down if it keeps dying right away.
        backoff_ms = std::min<long>(backoff_ms ? backoff_ms * 2 : 500, 10000);
        next_start = GetCurrentTimestamp() + backoff_ms * 1000;
      }
    }
    if (child == 0 && GetCurrentTimestamp() >= next_start) {
      child = start_worker();
      if (child > 0) {
        g_state->worker_pid = child;
        g_state->starts++;
        g_state->last_start = GetCurrentTimestamp();
      } else {
        next_start = GetCurrentTimestamp() + 10000 * 1000L;
      }
    }
    if (child > 0 && backoff_ms && GetCurrentTimestamp() - g_state->last_start > 60 * 1000000L) backoff_ms = 0;
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100, PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
  }
  stop_worker(child);
  g_state->worker_pid = 0;
  proc_exit(0);
}

// pgmate.eval_writers must be a list of names (roles that need not exist yet, as in
// search_path).
static bool check_eval_writers(char** value, void**, GucSource) {
  char* copy = pstrdup(*value);
  List* names = nullptr;
  const bool ok = SplitIdentifierString(copy, ',', &names);
  list_free(names);
  pfree(copy);
  if (!ok) GUC_check_errdetail("pgmate.eval_writers must be role names separated by commas.");
  return ok;
}

void _PG_init(void) {
  DefineCustomStringVariable("pgmate.worker_socket", "Unix socket of pgmate-worker ('' = pgmate_worker.sock in the data directory).",
                             nullptr, &pgmate::pg::worker_socket_setting, "", PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
  DefineCustomStringVariable("pgmate.worker_command", "The pgmate-worker program the supervisor starts ('' = beside postgres).",
                             nullptr, &pgmate::pg::worker_command_setting, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr,
                             nullptr, nullptr);
  DefineCustomStringVariable("pgmate.worker_device", "Device the supervised worker uses: auto, cpu or cuda.", nullptr,
                             &pgmate::pg::worker_device_setting, "auto", PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
  // The network's arithmetic on a GPU (the CPU runs fp32 whatever is set here).
  static const struct config_enum_entry precisions[] = {
      {"auto", 0, false}, {"fp32", 1, false}, {"bf16", 2, false}, {"fp16", 3, false}, {nullptr, 0, false}};
  DefineCustomEnumVariable("pgmate.worker_precision",
                           "The network's precision on a GPU: auto (bf16), fp32, bf16 or fp16.",
                           "Takes effect when the supervisor next starts the worker.",
                           &pgmate::pg::worker_precision_setting, 0, precisions, PGC_SIGHUP, 0, nullptr, nullptr,
                           nullptr);
  // Where the network's input planes are made (the worker's --encode).
  static const struct config_enum_entry encodings[] = {
      {"auto", 0, false}, {"host", 1, false}, {"device", 2, false}, {nullptr, 0, false}};
  DefineCustomEnumVariable("pgmate.worker_encode",
                           "Where the worker makes the network's input planes: auto (on the GPU when it has the GPU "
                           "encoder), host or device.",
                           "Takes effect when the supervisor next starts the worker.", &pgmate::pg::worker_encode_setting,
                           0, encodings, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("pgmate.worker_timeout", "How long a call waits for the worker.", nullptr,
                          &pgmate::pg::worker_timeout_ms, 60000, 100, 3600 * 1000, PGC_USERSET, GUC_UNIT_MS, nullptr,
                          nullptr, nullptr);
  DefineCustomIntVariable("pgmate.worker_network_memory",
                          "Memory the networks the supervised worker holds at once may take (least recently used out first).",
                          "Takes effect when the supervisor next starts the worker.", &pgmate::pg::worker_network_memory_mb,
                          2048, 16, 1 << 20, PGC_SIGHUP, GUC_UNIT_MB, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("pgmate.worker_perft_max_depth",
                          "Deepest perft a session may run on pgmate-worker (shared by every session).", nullptr,
                          &pgmate::pg::worker_perft_max_depth, 10, 0, 20, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("pgmate.worker_checkers_perft_max_depth",
                          "Deepest checkers perft a session may run on pgmate-worker (shared by every session).", nullptr,
                          &pgmate::pg::worker_checkers_perft_max_depth, 16, 0, 20, PGC_SUSET, 0, nullptr, nullptr,
                          nullptr);
  DefineCustomIntVariable("pgmate.selfplay_tree_memory",
                          "Memory the search trees of one CALL pgmate.selfplay may take.", nullptr,
                          &pgmate::pg::selfplay_tree_memory_mb, 1024, 1, 1 << 20, PGC_SUSET, GUC_UNIT_MB, nullptr,
                          nullptr, nullptr);
  DefineCustomIntVariable("pgmate.train_max_rows",
                          "The most rows, training and held-out together, one training holds in memory.", nullptr,
                          &pgmate::pg::train_max_rows, 10000000, 1, INT_MAX, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomStringVariable("pgmate.eval_writers",
                             "Roles whose rows of pgmate.position_evals this session reads, besides its own and "
                             "the extension owner's, in order of preference (* for every role).",
                             nullptr, &pgmate::pg::eval_writers_setting, "", PGC_USERSET, GUC_LIST_INPUT,
                             check_eval_writers, nullptr, nullptr);
  DefineCustomBoolVariable("pgmate.position_index_deferred_merges",
                           "Inserts into pgmate.games leave their position index runs unmerged until "
                           "pgmate.position_index_merge() (for bulk imports).",
                           nullptr, &pgmate::pg::position_index_deferred_merges, false, PGC_USERSET, 0, nullptr,
                           nullptr, nullptr);
  DefineCustomBoolVariable("pgmate.explorer_counts",
                           "The explorer answers from the per-position counts where they are kept (off: it "
                           "reads the games, to check the counts).",
                           nullptr, &pgmate::pg::counts::explorer_counts, true, PGC_USERSET, 0, nullptr, nullptr,
                           nullptr);
  if (!process_shared_preload_libraries_in_progress) {
    MarkGUCPrefixReserved("pgmate");
    return;
  }
  // Only meaningful at server start, so only defined then.
  DefineCustomBoolVariable("pgmate.worker_autostart", "Start and supervise pgmate-worker (needs shared_preload_libraries).",
                           nullptr, &g_autostart, true, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
  MarkGUCPrefixReserved("pgmate");
  g_prev_shmem_request = shmem_request_hook;
  shmem_request_hook = request_shmem;
  g_prev_shmem_startup = shmem_startup_hook;
  shmem_startup_hook = startup_shmem;
  if (!g_autostart) return;

  BackgroundWorker worker = {};
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
  worker.bgw_start_time = BgWorkerStart_PostmasterStart;
  worker.bgw_restart_time = 5;
  snprintf(worker.bgw_name, BGW_MAXLEN, "pgmate worker supervisor");
  snprintf(worker.bgw_type, BGW_MAXLEN, "pgmate worker supervisor");
  snprintf(worker.bgw_library_name, BGW_MAXLEN, "pgmate");
  snprintf(worker.bgw_function_name, BGW_MAXLEN, "pgmate_supervisor_main");
  RegisterBackgroundWorker(&worker);
}

// worker_pid() -> int: the supervised worker's pid, NULL when none runs (or no supervisor).
PGMATE_FUNCTION(supervisor_worker_pid) {
  if (!g_state || g_state->worker_pid == 0) PG_RETURN_NULL();
  return Int32GetDatum(g_state->worker_pid);
}

// pgmate.kill_worker() -> bool: SIGKILLs the supervised worker (for tests and operators;
// the supervisor starts a new one). Superuser only, by the function's grants.
PGMATE_FUNCTION(supervisor_kill_worker) {
  if (!g_state || g_state->worker_pid == 0) return BoolGetDatum(false);
  const pid_t pid = g_state->worker_pid;
  if (kill(pid, SIGKILL) != 0) return BoolGetDatum(false);
  // Return once the supervisor has seen it die, so the caller observes a dead worker.
  for (int i = 0; i < 500 && g_state->worker_pid == pid; ++i) {
    pgmate::pg::check_for_interrupts();
    pg_usleep(10000);
  }
  return BoolGetDatum(true);
}
