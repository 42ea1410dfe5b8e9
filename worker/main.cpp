// pgmate-worker: the process that owns the GPU (or the CPU) and batches move generation,
// perft and network evaluation for every PostgreSQL session.
//
//   pgmate-worker --socket PATH [--tcp HOST:PORT --token-file FILE] [--device auto|cpu|cuda]
//                 [--precision auto|fp32|bf16|fp16] [--encode auto|host|device] [--cuda-graphs]
//                 [--max-batch N] [--deadline-us N] [--threads N]
//                 [--max-weights-mb N] [--network-memory-mb N]
//
// Exit status: 0 after a clean stop (SIGTERM / SIGINT), 1 when it cannot start, 2 on a
// usage error, 3 when the GPU failed for good (a dead CUDA context: a new process is
// needed; the extension's supervisor starts one).
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>

#ifdef PGMATE_HAVE_CUDA
#include "worker/cuda/perft_kernel.h"
#endif
#include "link/socket_util.h"
#include "worker/backend/eval_backend.h"
#include "worker/server/server.h"
#include "worker/backend/train_backend.h"

namespace {

using namespace pgmate::worker;

constexpr const char* kUsage =
    "usage: pgmate-worker --socket PATH [--tcp HOST:PORT --token-file FILE]\n"
    "                     [--device auto|cpu|cuda] [--precision auto|fp32|bf16|fp16] [--encode auto|host|device]\n"
    "                     [--cuda-graphs] [--max-batch N] [--deadline-us N] [--threads N]\n"
    "                     [--max-weights-mb N] [--network-memory-mb N]\n"
    "\n"
    "  --socket PATH       Unix socket to serve (created with mode 0600)\n"
    "  --tcp HOST:PORT     also listen on TCP (PORT alone binds 127.0.0.1); needs --token-file\n"
    "  --token-file FILE   shared secret TCP clients must send in HELLO\n"
    "  --device D          auto (default), cpu or cuda: where the network runs and trains; cpu also keeps\n"
    "                      perft off the GPU\n"
    "  --precision P       the network's arithmetic: auto (default: bf16 on CUDA, fp32 on the CPU), fp32,\n"
    "                      bf16 or fp16 (the last two on CUDA only)\n"
    "  --encode E          where the network's input planes are made: host (on the CPU, then copied), device\n"
    "                      (from the boards, by the GPU encoder on CUDA), or auto (default: device on CUDA\n"
    "                      when this build has the GPU encoder, else host)\n"
    "  --cuda-graphs       replay each network's forward pass as CUDA graphs, one per batch size rounded up to\n"
    "                      a power of two (CUDA only; off by default)\n"
    "  --max-batch N       positions per evaluation batch (default 1024)\n"
    "  --deadline-us N     run a batch this long after its first request arrived (default 1000)\n"
    "  --threads N         perft threads (default: the number of CPUs)\n"
    "  --max-weights-mb N  largest LOAD_NETWORK frame / initialised weights, in MiB (default 64)\n"
    "  --network-memory-mb N  memory the networks held at once may take, in MiB (default 2048);\n"
    "                      the least recently used network goes first\n";

std::mutex log_mutex;

void log_line(const std::string& message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  const std::string line = std::string(stamp) + " pgmate-worker[" + std::to_string(getpid()) + "]: " + message + "\n";
  std::lock_guard lock(log_mutex);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "pgmate-worker: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

long parse_int(const std::string& option, const std::string& text, long lo, long hi) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    usage_error(option + " needs a whole number, not \"" + text + "\"");
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi)
    usage_error(option + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", not " + text);
  return long(v);
}

struct Options {
  std::string socket, tcp, token_file, device = "auto", precision = "auto", encode = "auto";
  bool cuda_graphs = false;
  int max_batch = 1024;
  long deadline_us = 1000;
  int threads = 0;
  long max_weights_mb = 64;
  long network_memory_mb = 2048;
};

Options parse_args(int argc, char** argv) {
  Options o;
  bool have_socket = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool inline_value = false;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) usage_error("unexpected argument \"" + arg + "\"");
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    auto next = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--socket") {
      o.socket = next();
      have_socket = true;
    } else if (arg == "--tcp") {
      o.tcp = next();
    } else if (arg == "--token-file") {
      o.token_file = next();
    } else if (arg == "--device") {
      o.device = next();
      if (o.device != "auto" && o.device != "cpu" && o.device != "cuda")
        usage_error("--device must be auto, cpu or cuda, not \"" + o.device + "\"");
    } else if (arg == "--precision") {
      o.precision = next();
      if (o.precision != "auto" && o.precision != "fp32" && o.precision != "bf16" && o.precision != "fp16")
        usage_error("--precision must be auto, fp32, bf16 or fp16, not \"" + o.precision + "\"");
    } else if (arg == "--encode") {
      o.encode = next();
      if (o.encode != "auto" && o.encode != "host" && o.encode != "device")
        usage_error("--encode must be auto, host or device, not \"" + o.encode + "\"");
    } else if (arg == "--cuda-graphs") {
      o.cuda_graphs = true;
    } else if (arg == "--max-batch") {
      o.max_batch = int(parse_int(arg, next(), 1, 1 << 16));
    } else if (arg == "--deadline-us") {
      o.deadline_us = parse_int(arg, next(), 0, 10'000'000);
    } else if (arg == "--max-weights-mb") {
      o.max_weights_mb = parse_int(arg, next(), 1, 4095);
    } else if (arg == "--network-memory-mb") {
      o.network_memory_mb = parse_int(arg, next(), 1, 1 << 20);
    } else if (arg == "--threads") {
      o.threads = int(parse_int(arg, next(), 1, 1024));
    } else {
      usage_error("unknown option " + arg);
    }
  }
  if (!have_socket || o.socket.empty()) usage_error("--socket PATH is required");
  try {
    (void)parse_address(o.socket);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  }
  if (o.socket.rfind("tcp://", 0) == 0) usage_error("--socket takes a path; use --tcp for TCP");
  if (!o.tcp.empty()) {
    try {
      (void)parse_host_port(o.tcp);
    } catch (const std::invalid_argument& e) {
      usage_error(std::string("--tcp: ") + e.what());
    }
    if (o.token_file.empty()) usage_error("--tcp needs --token-file (TCP clients must present a token)");
  } else if (!o.token_file.empty()) {
    usage_error("--token-file is only used with --tcp");
  }
  return o;
}

// The token: the file's content without trailing whitespace.
std::string read_token(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the token file " + path + ": " + errno_text(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) throw std::runtime_error("the token file " + path + " is empty");
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077))
    log_line("warning: the token file " + path + " is readable by other users (chmod 600 it)");
  return token;
}

// SIGTERM / SIGINT: the handler only asks the server to stop (an atomic store and a write
// to its eventfd, both async-signal-safe). A handler rather than sigwait in a thread, because
// libraries (LibTorch) may start threads before main() that would not have the signals blocked.
std::atomic<Server*> g_server{nullptr};
std::atomic<int> g_signal{0};  // a stop signal seen (also before the server existed)
static_assert(std::atomic<Server*>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  g_signal.store(sig);
  if (Server* s = g_server.load()) s->request_stop(sig);
  errno = saved_errno;
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  // Installed even where SIGINT was inherited as ignored (a background job): an explicit
  // kill -INT should stop the worker cleanly.
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // sends use MSG_NOSIGNAL anyway
  // A parent may exec us with signals blocked (a PostgreSQL background worker blocks them
  // while it starts children); unblock them in this thread and in the threads it creates.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  // OpenMP threads that spin between parallel regions take the cores that the evaluation's
  // own team, the other worker threads and the PostgreSQL backends need: on the 2-core
  // machine batch 1 ran at 59 instead of 100 positions/s. libgomp reads its settings when
  // it is loaded, before main, so set the policy and start again (same pid). An explicit
  // OMP_WAIT_POLICY is left as it is.
  if (!std::getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0) {
    execv("/proc/self/exe", argv);
    unsetenv("OMP_WAIT_POLICY");  // exec failed: go on with libgomp's defaults
  }
  const Options opt = parse_args(argc, argv);
  install_signal_handlers();

  ServerConfig config;
  config.socket_path = opt.socket;
  config.tcp = opt.tcp;
  config.batcher.max_batch = opt.max_batch;
  config.batcher.deadline = std::chrono::microseconds(opt.deadline_us);
  config.batcher.network_memory = std::size_t(opt.network_memory_mb) << 20;
  config.threads = opt.threads;
  config.gpu_allowed = opt.device != "cpu";
  config.limits.max_large_payload = std::uint32_t(opt.max_weights_mb) << 20;
  config.log = log_line;

  std::unique_ptr<Server> server;
  try {
    if (!opt.token_file.empty()) config.token = read_token(opt.token_file);
    std::unique_ptr<EvalBackend> backend =
        make_torch_backend(opt.device, std::uint64_t(config.limits.max_large_payload), opt.precision, opt.encode,
                           opt.cuda_graphs);
    if (!backend) throw std::runtime_error("no evaluation backend for device " + opt.device);
#ifdef PGMATE_HAVE_CUDA
    // A GPU that only perft can use: say so, rather than serve the network slowly unnoticed.
    if (opt.device == "auto" && backend->device() == "cpu" && pgmate::gpu::cuda_device_available(nullptr))
      log_line("warning: a CUDA device is present but this LibTorch has none (a CPU-only build): the network "
               "runs on the CPU; build against a CUDA LibTorch (see worker/README.md)");
#endif
    // Training sessions (TRAIN_*) run on the same device, on a thread of their own.
    std::unique_ptr<TrainBackend> train_backend = make_torch_train_backend(opt.device);
    server = std::make_unique<Server>(std::move(config), std::move(backend), std::move(train_backend));
  } catch (const std::exception& e) {
    log_line(std::string("cannot start: ") + e.what());
    return 1;
  }

  g_server.store(server.get());
  if (const int sig = g_signal.load()) server->request_stop(sig);  // arrived while starting
  int status = 0;
  try {
    server->run();
  } catch (const std::exception& e) {
    log_line(std::string("fatal: ") + e.what());
    status = 1;
  }
  if (server->device_lost()) status = 3;
  g_server.store(nullptr);
  server.reset();
  return status;
}
