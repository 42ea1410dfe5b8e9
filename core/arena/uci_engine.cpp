#include "arena/uci_engine.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>

#include "chess/fen.h"
#include "chess/notation.h"
#include "common/text.h"

extern char** environ;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)) && \
    !defined(PGMATE_SPAWN_BY_FORK)
#define PGMATE_HAVE_ADDCLOSEFROM 1
#endif

namespace pgmate::arena {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kMaxLine = 1 << 16;     // an engine that writes no newline for 64 KiB is broken
constexpr std::size_t kReadChunk = 1 << 16;   // taken per read_some, so a flood costs bounded time per call
constexpr milliseconds kPollSlice{100};       // the longest wait between interrupt checks
constexpr milliseconds kWriteTimeout{10000};  // for a position and go: an engine reads between moves
constexpr milliseconds kQuitGrace{1000};      // after quit, before the group is killed

// The registry of live engine process groups: a fixed table of atomics, so that a signal
// handler or an exit callback can read it without locks. 0 is a free slot.
constexpr std::size_t kMaxLiveEngines = 16384;
std::atomic<pid_t> g_live_groups[kMaxLiveEngines];

bool register_group(pid_t group) {
  for (auto& slot : g_live_groups) {
    pid_t free = 0;
    if (slot.load(std::memory_order_relaxed) == 0 && slot.compare_exchange_strong(free, group)) return true;
  }
  return false;
}

void unregister_group(pid_t group) {
  for (auto& slot : g_live_groups) {
    pid_t mine = group;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

bool is_live_engine(pid_t pid) {
  for (auto& slot : g_live_groups)
    if (slot.load(std::memory_order_relaxed) == pid) return true;
  return false;
}

// Held while an engine is started and registered, and while orphans are swept, so that a
// sweep on one thread never takes an engine another is starting for an orphan.
std::mutex g_spawn_mutex;

// The decimal digits of a non-negative number at `out` (no allocation: for signal handlers).
char* append_number(char* out, long value) {
  char digits[24];
  int n = 0;
  do digits[n++] = char('0' + value % 10);
  while ((value /= 10) > 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

// A non-negative decimal number at `p` (moved past it); -1 when there is none.
long read_number(const char*& p, const char* end) {
  long value = -1;
  for (; p < end && *p >= '0' && *p <= '9'; ++p) value = (value < 0 ? 0 : value * 10) + (*p - '0');
  return value;
}

// Kills (SIGKILL) every child of this process that is neither a live engine nor in this
// process's own group, and reaps it (waiting for it with `wait`, else only if it is
// already gone). Such children are what engines left behind and this process adopted as
// a child subreaper: descendants that left their engine's group (setsid) or outlived
// their parent in it. Children in this process's group are its own (popen, COPY ...
// PROGRAM) and are left alone. Returns whether a process of `group` (> 0) other than a
// zombie was seen. Reads /proc with system calls only: async-signal-safe.
bool sweep_orphans(pid_t group, bool wait) noexcept {
  const int saved_errno = errno;
  const pid_t self = getpid(), own_group = getpgrp();
  bool group_seen = false;
  const int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    errno = saved_errno;
    return false;
  }
  struct Entry {
    ino64_t ino;
    off64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  alignas(8) char entries[8192];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, entries, sizeof entries);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const Entry* e = reinterpret_cast<const Entry*>(entries + at);
      at += e->reclen;
      const char* name = e->name;
      const char* name_end = name + strnlen(name, 16);
      const long pid = read_number(name, name_end);
      if (pid <= 0 || name != name_end || pid == self) continue;
      char path[48] = "/proc/";
      char* end = append_number(path + 6, pid);
      std::memcpy(end, "/stat", 6);
      const int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;  // gone meanwhile
      char stat[512];
      const ssize_t n = read(fd, stat, sizeof stat);
      close(fd);
      if (n <= 0) continue;
      // "PID (NAME) STATE PPID PGRP ...": the name may hold anything, so from its last ')'.
      const char* p = stat + n;
      while (p > stat && p[-1] != ')') --p;
      if (p == stat || stat + n - p < 4) continue;
      const char state = p[1];
      p += 3;
      const long ppid = read_number(p, stat + n);
      if (p < stat + n) ++p;
      const long pgrp = read_number(p, stat + n);
      if (group > 0 && pgrp == group && state != 'Z') group_seen = true;
      if (ppid != self || pgrp == own_group || pgrp < 0 || is_live_engine(pid_t(pid))) continue;
      kill(pid_t(pid), SIGKILL);
      while (waitpid(pid_t(pid), nullptr, wait ? 0 : WNOHANG) < 0 && errno == EINTR) {
      }
    }
  }
  close(dir);
  errno = saved_errno;
  return group_seen;
}

// One write() with SIGPIPE held off: a dead engine's pipe must give EPIPE here, not the
// signal that would kill the whole match. The signal is blocked for this thread meanwhile
// and a pending one consumed, so nothing of it outlives the call.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  ssize_t n;
  do n = write(fd, data, size);
  while (n < 0 && errno == EINTR);
  const int err = errno;
  if (n < 0 && err == EPIPE) {
    struct timespec zero = {0, 0};
    sigtimedwait(&block, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return n;
}

int millis_until(Clock::time_point deadline, milliseconds cap) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return int(std::clamp(left, milliseconds(0), cap).count());
}

// Starts argv with in_fd as stdin, out_fd as stdout and /dev/null as stderr, in a process
// group of its own (so a terminal's Ctrl-C reaches the match, which then stops the engines
// itself, and the engine's own children can be killed with it), with default signal
// handling and no blocked signals whatever the caller (a PostgreSQL backend ignores
// SIGPIPE, say) set up for itself, and no other descriptor: not a backend's client socket
// or data files. Returns 0 or an errno value.
int spawn_engine(pid_t& pid, std::vector<char*>& argv, int in_fd, int out_fd) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
#ifdef PGMATE_HAVE_ADDCLOSEFROM
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
#else
  // Without posix_spawn's closefrom: fork, and only async-signal-safe calls in the child.
  // The child reports a failed exec through a close-on-exec pipe.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  const int max_fd = int(sysconf(_SC_OPEN_MAX) > 0 ? sysconf(_SC_OPEN_MAX) : 1024);
  pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(report[0]);
    close(report[1]);
    return err;
  }
  if (pid == 0) {
    const int report_fd = fcntl(report[1], F_DUPFD_CLOEXEC, 3);  // clear of 0-2, replaced next
    setpgid(0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int err = 0, report_to = report_fd;
    const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (report_fd < 0 || null_fd < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(null_fd, 2) < 0) err = errno;
    if (!err && report_fd != 3) {
      if (dup3(report_fd, 3, O_CLOEXEC) < 0) err = errno;
      else report_to = 3;
    }
    if (!err) {
#ifdef SYS_close_range
      if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
#endif
        for (int fd = 4; fd < max_fd; ++fd) close(fd);
      execvp(argv[0], argv.data());
      err = errno;
    }
    if (report_to >= 0) (void)!write(report_to, &err, sizeof err);
    _exit(127);
  }
  close(report[1]);
  int err = 0;
  ssize_t n;
  do n = read(report[0], &err, sizeof err);
  while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == ssize_t(sizeof err)) {
    waitpid(pid, nullptr, 0);
    return err;
  }
  return 0;
#endif
}

}  // namespace

void kill_live_engine_groups() noexcept {
  for (auto& slot : g_live_groups)
    if (const pid_t group = slot.load(); group > 0) kill(-group, SIGKILL);
  kill_engine_orphans();
}

void kill_engine_orphans() noexcept { sweep_orphans(0, false); }

bool become_child_subreaper() noexcept {
#ifdef PR_SET_CHILD_SUBREAPER
  static const bool done = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  return done;
#else
  return false;
#endif
}

int live_engine_groups() noexcept {
  int n = 0;
  for (auto& slot : g_live_groups) n += slot.load() > 0;
  return n;
}

UciEngine::UciEngine(const std::string& command, const std::vector<std::pair<std::string, std::string>>& options,
                     milliseconds start_timeout, InterruptCheck interrupt_check)
    : command_(command), interrupt_check_(std::move(interrupt_check)) {
  const std::vector<std::string> words = command_words(command);
  if (words.empty()) throw UciError("UCI engine: empty command");
  name_ = escape_text(words[0], 80);
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw UciError("UCI engine " + quote_input(command, 80) + ": pipe: " + std::strerror(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    throw UciError("UCI engine " + quote_input(command, 80) + ": pipe: " + std::strerror(errno));
  }
  std::vector<char*> argv;
  std::vector<std::string> args = words;
  for (auto& w : args) argv.push_back(w.data());
  argv.push_back(nullptr);
  // Before the first engine starts: its descendants that leave its group come to this
  // process when orphaned, not to init, and are killed when an engine stops.
  become_child_subreaper();
  int rc;
  bool registered = false;
  {
    std::lock_guard lock(g_spawn_mutex);
    rc = spawn_engine(pid_, argv, in[0], out[1]);
    if (rc == 0) registered = register_group(pid_);
  }
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
  if (!registered) {
    shutdown();
    throw UciError("UCI engine " + quote_input(command, 80) + " cannot be started: too many engines at once");
  }
  fcntl(from_engine_, F_SETFL, fcntl(from_engine_, F_GETFL) | O_NONBLOCK);
  fcntl(to_engine_, F_SETFL, fcntl(to_engine_, F_GETFL) | O_NONBLOCK);
  try {
    // One deadline for the whole handshake, whatever the engine writes meanwhile.
    const auto deadline = Clock::now() + start_timeout;
    send("uci", deadline);
    wait_for(
        [&](const std::string& line) {
          if (line.rfind("id name ", 0) == 0) name_ = escape_text(line.substr(8), 80);
          if (line.rfind("option name ", 0) == 0 && declared_options_.size() < 256) {
            // The name runs to " type " (names may hold blanks: "Skill Level").
            const std::size_t end = line.find(" type ", 12);
            declared_options_.push_back(line.substr(12, end == std::string::npos ? std::string::npos : end - 12));
          }
          return line == "uciok";
        },
        deadline, start_timeout, "uci");
    for (const auto& [k, v] : options) send("setoption name " + k + " value " + v, deadline);
    send("isready", deadline);
    wait_for([](const std::string& line) { return line == "readyok"; }, deadline, start_timeout, "isready");
  } catch (...) {
    shutdown();
    throw;
  }
}

UciEngine::~UciEngine() { shutdown(); }

void UciEngine::request_quit() noexcept {
  if (to_engine_ >= 0) {
    write_without_sigpipe(to_engine_, "quit\n", 5);  // not waited for: a deaf engine is killed below
    close(to_engine_);
    to_engine_ = -1;
    quit_asked_ = Clock::now();
  }
  // Closed now, so an engine blocked writing to us gets EPIPE rather than waiting for the kill.
  if (from_engine_ >= 0) {
    close(from_engine_);
    from_engine_ = -1;
  }
}

void UciEngine::shutdown() noexcept {
  if (to_engine_ >= 0) request_quit();
  if (from_engine_ >= 0) {
    close(from_engine_);
    from_engine_ = -1;
  }
  if (pid_ <= 0) return;
  // Waits for the leader to exit without reaping it: while it is a zombie, its process
  // group id cannot be taken by another process, so the group kill below hits only what
  // the engine left behind (a wrapper script's children, say).
  const auto deadline = quit_asked_ + kQuitGrace;
  siginfo_t info;
  for (;;) {
    info.si_pid = 0;
    if (waitid(P_PID, id_t(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno != EINTR) break;
    if (info.si_pid == pid_ || Clock::now() > deadline) break;
    usleep(2000);
  }
  kill(-pid_, SIGKILL);
  unregister_group(pid_);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  // What the engine left outside its group (a setsid'd daemon) or orphaned by the kill came
  // to this process, its subreaper: killed and reaped, once no process of the group runs any
  // more (a parent that dies in the kill hands its children on as it goes), then once again.
  {
    std::lock_guard lock(g_spawn_mutex);
    const auto until = Clock::now() + kQuitGrace;
    while (sweep_orphans(pid_, true) && Clock::now() < until) usleep(2000);
    sweep_orphans(pid_, true);
  }
  pid_ = -1;
}

void UciEngine::send(const std::string& line, Clock::time_point deadline) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write_without_sigpipe(to_engine_, text.data() + done, text.size() - done);
    if (n > 0) {
      done += std::size_t(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      throw UciError("UCI engine " + name_ + " stopped reading its input (" + std::strerror(errno) + ")");
    // The pipe is full: the engine is not reading. Wait in slices, checking for interrupts.
    if (Clock::now() >= deadline)
      throw UciError("UCI engine " + name_ + " stopped reading its input (" + std::to_string(text.size() - done) +
                     " bytes not taken in time)");
    check_interrupts();
    pollfd p{to_engine_, POLLOUT, 0};
    ::poll(&p, 1, millis_until(deadline, kPollSlice));
  }
}

void UciEngine::read_some(milliseconds wait) {
  check_interrupts();
  if (eof_) return;
  pollfd p{from_engine_, POLLIN, 0};
  if (::poll(&p, 1, int(std::clamp(wait, milliseconds(0), kPollSlice).count())) <= 0) return;
  // Lines taken are dropped here, at most once per chunk: moving the rest to the front is
  // then linear in what was read, however many lines it held.
  if (begin_ > 0) {
    buffer_.erase(0, begin_);
    scanned_ -= begin_;
    begin_ = 0;
  }
  char chunk[16384];
  std::size_t got = 0;
  while (got < kReadChunk) {
    const ssize_t n = read(from_engine_, chunk, std::min(sizeof chunk, kReadChunk - got));
    if (n > 0) {
      buffer_.append(chunk, std::size_t(n));
      got += std::size_t(n);
    } else if (n == 0) {
      eof_ = true;
      break;
    } else if (errno != EINTR) {
      break;  // EAGAIN: all read
    }
  }
}

std::optional<std::string> UciEngine::next_line() {
  const char* data = buffer_.data();
  const void* nl = std::memchr(data + scanned_, '\n', buffer_.size() - scanned_);
  if (!nl) {
    scanned_ = buffer_.size();
    if (scanned_ - begin_ > kMaxLine) throw UciError("UCI engine " + name_ + " wrote a line longer than 64 KiB");
    return std::nullopt;
  }
  const std::size_t end = std::size_t(static_cast<const char*>(nl) - data);
  if (end - begin_ > kMaxLine) throw UciError("UCI engine " + name_ + " wrote a line longer than 64 KiB");
  std::size_t last = end;
  while (last > begin_ && (data[last - 1] == '\r' || data[last - 1] == ' ' || data[last - 1] == '\t')) --last;
  std::string line(data + begin_, last - begin_);
  begin_ = scanned_ = end + 1;
  return line;
}

void UciEngine::wait_for(const std::function<bool(const std::string&)>& done, Clock::time_point deadline,
                         milliseconds timeout, const char* asked) {
  for (;;) {
    // What one read_some took: bounded, so the deadline below is reached however much the
    // engine writes.
    while (auto line = next_line())
      if (done(*line)) return;
    if (eof_) throw UciError("UCI engine " + quote_input(command_, 80) + " exited (asked \"" + asked + "\")");
    if (Clock::now() >= deadline)
      throw UciError("UCI engine " + name_ + " did not answer \"" + asked + "\" within " +
                     std::to_string(timeout.count()) + " ms");
    read_some(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  }
}

bool UciEngine::has_option(const std::string& name) const {
  // UCI option names are case-insensitive.
  const auto same = [&](const std::string& o) {
    return o.size() == name.size() && std::equal(o.begin(), o.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  };
  return std::any_of(declared_options_.begin(), declared_options_.end(), same);
}

void UciEngine::set_option(const std::string& name, const std::string& value, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  send("setoption name " + name + " value " + value, deadline);
  send("isready", deadline);
  wait_for([](const std::string& line) { return line == "readyok"; }, deadline, timeout, "isready");
}

void UciEngine::new_game(milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  send("ucinewgame", deadline);
  send("isready", deadline);
  wait_for([](const std::string& line) { return line == "readyok"; }, deadline, timeout, "isready");
}

// Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
void UciEngine::go(const chess::Board& start, const std::vector<chess::Move>& moves, const UciLimits& limits) {
  std::string position = "position fen " + chess::to_fen(start);
  if (!moves.empty()) {
    position += " moves";
    for (const chess::Move m : moves) position.append(" ").append(chess::to_uci(m));
  }
  const auto deadline = Clock::now() + kWriteTimeout;
  send(position, deadline);
  std::string go = "go";
  if (limits.nodes) go.append(" nodes ").append(std::to_string(limits.nodes));
  if (limits.movetime_ms) go.append(" movetime ").append(std::to_string(limits.movetime_ms));
  if (limits.depth) go.append(" depth ").append(std::to_string(limits.depth));
  lines_.clear();
  send(go, deadline);
}

std::optional<std::string> UciEngine::poll_bestmove(milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  for (bool read = false;; read = true) {
    while (auto line = next_line()) {
      if (line->rfind("bestmove", 0) == 0) {
        std::string rest = line->substr(8);
        const std::size_t b = rest.find_first_not_of(' ');
        rest = b == std::string::npos ? "" : rest.substr(b);
        return rest.substr(0, rest.find(' '));
      }
      if (info_sink_ && line->rfind("info ", 0) == 0) info_sink_(*line);
      if (lines_.size() < 64) lines_.push_back(escape_text(*line, 200));
    }
    if (eof_) throw UciError("UCI engine " + name_ + " exited in the middle of a move");
    // At least one chunk read per call; the rest waits for the next call once the time is up.
    if (read && Clock::now() >= deadline) return std::nullopt;
    read_some(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  }
}

milliseconds UciEngine::move_deadline(const UciLimits& limits) {
  // Generous: the point is to notice a hung engine, not to enforce a time control. The
  // engine stops at the first of its limits it reaches, so the least allowance of the
  // limits given holds:
  // - movetime: twice the time and 5 s;
  // - nodes: 60 s and the nodes at 10,000 nodes/s, far below any engine worth analysing
  //   with (Stockfish 15.1 searches about 650,000 nodes/s on one thread);
  // - depth: 2 minutes to depth 20, doubling every 3 plies beyond (depth 30: 20 minutes,
  //   depth 40: 3.4 hours). Stockfish 15.1 on one thread reaches depth 24 in 3.4 s and
  //   needs about 1.33 times the nodes per ply more, so it stays 30 times inside this to
  //   depth 40 and inside it to about depth 80.
  // Capped at 30 days, which keeps the clock arithmetic clear of overflow.
  constexpr milliseconds kLongest = std::chrono::hours(24 * 30);
  constexpr std::int64_t kFloorNodesPerMs = 10;
  if (limits.movetime_ms <= 0 && limits.nodes <= 0 && limits.depth <= 0) return std::chrono::seconds(60);
  std::int64_t least = kLongest.count();
  if (limits.movetime_ms > 0) least = std::min(least, std::min(limits.movetime_ms, least) * 2 + 5000);
  if (limits.nodes > 0) least = std::min(least, 60000 + limits.nodes / kFloorNodesPerMs);
  if (limits.depth > 0) {
    const double ms = 120000.0 * std::exp2(std::max(limits.depth - 20, 0) / 3.0);
    if (ms < double(least)) least = std::int64_t(ms);
  }
  return milliseconds(std::min(least, kLongest.count()));
}

}  // namespace pgmate::arena
