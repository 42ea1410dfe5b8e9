#include "network_file.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "args.h"
#include "common/sha256.h"
#include "link/network_config.h"
#include "link/safetensors.h"

extern char** environ;

namespace pgmate::cli {

namespace fs = std::filesystem;

namespace {

// The directory of this program (/proc/self/exe), or "".
std::string program_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

}  // namespace

NetworkFile read_network_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read the network file " + path);
  NetworkFile f;
  f.path = path;
  f.weights.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  try {
    const worker::nn::SafetensorsView view = worker::nn::parse_safetensors(f.weights);
    const std::string* config = view.metadata_value("pgmate_config");
    if (!config) throw std::invalid_argument("no pgmate_config in its metadata: not pgmate weights");
    worker::nn::parse_network_config(*config);  // checked here, before a worker is asked
    f.config = *config;
  } catch (const std::invalid_argument& e) {
    throw UsageError("network file " + path + ": " + e.what());
  }
  f.key.database = 0;
  f.key.id = 1;
  f.key.sha256 = sha256(f.weights);
  return f;
}

std::string shipped_network_path() {
  if (const char* env = std::getenv("PGMATE_NETWORK"); env && *env) return env;
  const std::string dir = program_dir();
  std::vector<std::string> candidates;
  if (!dir.empty()) candidates.push_back(dir + "/../../networks/pgmate_default.safetensors");
  candidates.push_back("/usr/share/postgresql/15/extension/pgmate_default.safetensors");
  for (const std::string& c : candidates)
    if (is_file(c)) return fs::weakly_canonical(c).string();
  return "";
}

PrivateWorker::PrivateWorker() {
  std::string program;
  const std::string dir = program_dir();
  for (const std::string& c : {dir.empty() ? std::string() : dir + "/pgmate-worker",
                               std::string("/usr/lib/postgresql/15/bin/pgmate-worker")})
    if (is_file(c)) {
      program = c;
      break;
    }
  if (program.empty()) program = "pgmate-worker";  // PATH
  char tmpl[] = "/tmp/pgmate-worker-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("cannot make a folder for pgmate-worker: ") + std::strerror(errno));
  dir_ = tmpl;
  socket_ = dir_ + "/worker.sock";
  std::vector<std::string> args = {program, "--socket", socket_};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Its log stays out of the command's output (UCI's stdout, the player's terminal); a worker
  // that fails is reported by the client that cannot reach it.
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawnp(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    rmdir(dir_.c_str());
    throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc) +
                             " (make build builds it; or name a running worker with --worker)");
  }
  // Ready when its socket exists (it loads LibTorch first: a second or two).
  for (int i = 0; i < 300; ++i) {
    struct stat st;
    if (stat(socket_.c_str(), &st) == 0) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      rmdir(dir_.c_str());
      throw std::runtime_error(program + " exited before it served " + socket_);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  rmdir(dir_.c_str());
  throw std::runtime_error(program + " did not serve " + socket_ + " within 15 s");
}

PrivateWorker::~PrivateWorker() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  unlink(socket_.c_str());
  rmdir(dir_.c_str());
}

}  // namespace pgmate::cli
