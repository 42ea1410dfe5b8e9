#include "arena/uci_engine.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "chess/fen.h"
#include "chess/notation.h"
#include "common/text.h"

extern char** environ;

namespace pgmate::arena {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kMaxLine = 1 << 16;  // an engine that writes no newline for 64 KiB is broken

// Writes all of text; false (errno set) when the engine stopped reading. A dead engine's
// pipe must give an error here, not the SIGPIPE that would kill the whole match: the
// signal is blocked for this thread meanwhile, and a pending one consumed.
bool write_all(int fd, const std::string& text) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  std::size_t done = 0;
  bool ok = true;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += std::size_t(n);
  }
  const int err = errno;
  if (!ok) {
    struct timespec zero = {0, 0};
    sigtimedwait(&block, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return ok;
}

}  // namespace

UciEngine::UciEngine(const std::string& command, const std::vector<std::pair<std::string, std::string>>& options,
                     milliseconds start_timeout)
    : command_(command) {
  const std::vector<std::string> words = command_words(command);
  if (words.empty()) throw UciError("UCI engine: empty command");
  name_ = words[0];
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw UciError("UCI engine " + quote_input(command, 80) + ": pipe: " + std::strerror(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    throw UciError("UCI engine " + quote_input(command, 80) + ": pipe: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  // Its own process group, so that a terminal's Ctrl-C reaches the match, which then stops
  // the engines itself.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Default signal handling and no blocked signals, whatever the caller (a PostgreSQL
  // backend ignores SIGPIPE, say) set up for itself.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> argv;
  std::vector<std::string> args = words;
  for (auto& w : args) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  to_engine_ = in[1];
  from_engine_ = out[0];
  if (rc != 0) {
    pid_ = -1;
    close(to_engine_);
    close(from_engine_);
    to_engine_ = from_engine_ = -1;
    throw UciError("UCI engine " + quote_input(command, 80) + " cannot be started: " + std::strerror(rc));
  }
  fcntl(from_engine_, F_SETFL, fcntl(from_engine_, F_GETFL) | O_NONBLOCK);
  try {
    send("uci");
    const auto deadline = Clock::now() + start_timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      const std::string line = wait_for("", std::max(left, milliseconds(0)), "uci");
      if (line.rfind("id name ", 0) == 0) name_ = line.substr(8);
      if (line == "uciok") break;
    }
    for (const auto& [k, v] : options) send("setoption name " + k + " value " + v);
    send("isready");
    wait_for("readyok", start_timeout, "isready");
  } catch (...) {
    shutdown();
    throw;
  }
}

UciEngine::~UciEngine() { shutdown(); }

void UciEngine::shutdown() {
  if (to_engine_ >= 0) {
    write_all(to_engine_, "quit\n");
    close(to_engine_);
    to_engine_ = -1;
  }
  if (pid_ > 0) {
    int status = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      usleep(2000);
    }
    pid_ = -1;
  }
  if (from_engine_ >= 0) {
    close(from_engine_);
    from_engine_ = -1;
  }
}

void UciEngine::send(const std::string& line) {
  if (!write_all(to_engine_, line + "\n"))
    throw UciError("UCI engine " + name_ + " stopped reading its input (" + std::strerror(errno) + ")");
}

bool UciEngine::read_some(milliseconds wait) {
  pollfd p{from_engine_, POLLIN, 0};
  const int ready = ::poll(&p, 1, int(wait.count()));
  if (ready <= 0) return true;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(from_engine_, buf, sizeof buf);
    if (n > 0) {
      buffer_.append(buf, std::size_t(n));
      if (buffer_.size() > kMaxLine && buffer_.find('\n') == std::string::npos)
        throw UciError("UCI engine " + name_ + " wrote a line longer than 64 KiB");
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: all read
  }
}

std::optional<std::string> UciEngine::next_line() {
  const std::size_t nl = buffer_.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buffer_.substr(0, nl);
  buffer_.erase(0, nl + 1);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

std::string UciEngine::wait_for(const std::string& prefix, milliseconds timeout, const char* asked) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    while (auto line = next_line())
      if (line->rfind(prefix, 0) == 0) return *line;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() < 0)
      throw UciError("UCI engine " + name_ + " did not answer \"" + asked + "\" within " +
                     std::to_string(timeout.count()) + " ms");
    if (!read_some(std::min(left, milliseconds(100))))
      throw UciError("UCI engine " + quote_input(command_, 80) + " exited (asked \"" + asked + "\")");
  }
}

void UciEngine::new_game(milliseconds timeout) {
  send("ucinewgame");
  send("isready");
  wait_for("readyok", timeout, "isready");
}

// Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
void UciEngine::go(const chess::Board& start, const std::vector<chess::Move>& moves, const UciLimits& limits) {
  std::string position = "position fen " + chess::to_fen(start);
  if (!moves.empty()) {
    position += " moves";
    for (const chess::Move m : moves) position.append(" ").append(chess::to_uci(m));
  }
  send(position);
  std::string go = "go";
  if (limits.nodes) go.append(" nodes ").append(std::to_string(limits.nodes));
  if (limits.movetime_ms) go.append(" movetime ").append(std::to_string(limits.movetime_ms));
  if (limits.depth) go.append(" depth ").append(std::to_string(limits.depth));
  lines_.clear();
  send(go);
}

std::optional<std::string> UciEngine::poll_bestmove(milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  for (;;) {
    while (auto line = next_line()) {
      if (line->rfind("bestmove", 0) == 0) {
        std::string rest = line->substr(8);
        const std::size_t b = rest.find_first_not_of(' ');
        rest = b == std::string::npos ? "" : rest.substr(b);
        return rest.substr(0, rest.find(' '));
      }
      if (lines_.size() < 64) lines_.push_back(std::move(*line));
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (!read_some(std::max(left, milliseconds(0))))
      throw UciError("UCI engine " + name_ + " exited in the middle of a move");
    if (Clock::now() >= deadline && buffer_.find('\n') == std::string::npos) return std::nullopt;
  }
}

milliseconds UciEngine::move_deadline(const UciLimits& limits) {
  // Generous: the point is to notice a hung engine, not to enforce a time control.
  if (limits.movetime_ms && !limits.nodes && !limits.depth) return milliseconds(limits.movetime_ms * 2 + 5000);
  return std::chrono::seconds(60);
}

}  // namespace pgmate::arena
