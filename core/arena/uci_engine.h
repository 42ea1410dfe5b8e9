// An external UCI engine (Stockfish, pgmate uci, ...) as a child process on pipes. No
// shell: the command is split at blanks. Everything it is asked waits at most a deadline,
// so an engine that hangs, dies or talks nonsense costs a UciError, never a hung match:
// - reads and writes are non-blocking; output is taken in bounded chunks with a line-length
//   limit, so an engine that floods its output costs bounded time per call, and a deadline
//   is reached whatever it writes;
// - the caller's interrupt check runs at least every 100 ms while waiting on the engine;
// - the engine runs in a process group of its own, which is killed as a whole when the
//   engine is stopped (children of a wrapper script included), and which is listed in a
//   registry of live engine groups for a process that ends without unwinding
//   (kill_live_engine_groups);
// - the process that starts engines becomes a child subreaper (Linux), so a descendant
//   that leaves the engine's group (setsid) comes to it when orphaned, not to init; such
//   children are killed and reaped when an engine is stopped (kill_engine_orphans);
// - it inherits no descriptor but its stdin, stdout and /dev/null as stderr;
// - its name and everything else it writes that ends up in a message is escaped text
//   (escape_text): valid UTF-8, no control bytes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "arena/player_spec.h"
#include "chess/board.h"

namespace pgmate::arena {

struct UciError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The caller's cancellation check (query cancel, statement_timeout, Ctrl-C), called while
// waiting on an engine. It stops the wait by throwing; the engine is then stopped as after
// any other error.
using InterruptCheck = std::function<void()>;

class UciEngine {
 public:
  // Starts the program and completes the handshake (uci ... uciok, the options, isready ...
  // readyok) within `start_timeout`. Throws UciError naming the command and what failed.
  UciEngine(const std::string& command, const std::vector<std::pair<std::string, std::string>>& options,
            std::chrono::milliseconds start_timeout = std::chrono::seconds(10), InterruptCheck interrupt_check = {});
  ~UciEngine();  // quit, then the process group killed when the engine does not go within a second
  UciEngine(const UciEngine&) = delete;
  UciEngine& operator=(const UciEngine&) = delete;

  const std::string& name() const { return name_; }  // "id name" (escaped), or the program
  pid_t pid() const { return pid_; }                 // also its process group
  // The pipe its output arrives on (for poll() across many engines; -1 once it is stopped).
  int output_fd() const { return from_engine_; }

  // Asks the engine to quit and closes its pipes, without waiting: the destructor then
  // waits at most the rest of the second from here. Lets many engines stop in parallel.
  void request_quit() noexcept;

  // ucinewgame, isready ... readyok.
  void new_game(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // position fen START moves ... and go with the limits; does not wait for the answer.
  void go(const chess::Board& start, const std::vector<chess::Move>& moves, const UciLimits& limits);
  // The move text of "bestmove X" (raw bytes: it may be anything) once it has arrived
  // (waiting at most `wait`), else nullopt. Throws UciError when the engine has died.
  std::optional<std::string> poll_bestmove(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Lines the engine wrote since the last go (info lines, escaped), at most 64, for diagnostics.
  const std::vector<std::string>& last_lines() const { return lines_; }
  // Called with every line that begins with "info " as poll_bestmove reads it (raw bytes, at
  // most 64 KiB): how an analysis reads scores and principal variations.
  void set_info_sink(std::function<void(const std::string&)> sink) { info_sink_ = std::move(sink); }

  // Whether the engine declared an option of this name in its handshake ("option name N ...").
  bool has_option(const std::string& name) const;
  // setoption, then isready ... readyok within `timeout`.
  void set_option(const std::string& name, const std::string& value,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // How long a move with these limits may take before the engine is declared hung: the
  // least of what each limit given allows (movetime, nodes at a floor speed, depth), at most
  // 30 days; 60 s for no limit.
  static std::chrono::milliseconds move_deadline(const UciLimits& limits);

 private:
  using Clock = std::chrono::steady_clock;
  void shutdown() noexcept;
  void send(const std::string& line, Clock::time_point deadline);
  // Waits at most `wait` for output, then takes at most one bounded chunk of it.
  void read_some(std::chrono::milliseconds wait);
  std::optional<std::string> next_line();
  // Feeds lines to `done` until it returns true; throws UciError at the deadline, naming
  // `asked` and `timeout` (the whole time allowed, for the message).
  void wait_for(const std::function<bool(const std::string&)>& done, Clock::time_point deadline,
                std::chrono::milliseconds timeout, const char* asked);
  void check_interrupts() const {
    if (interrupt_check_) interrupt_check_();
  }

  std::string command_, name_;
  InterruptCheck interrupt_check_;
  pid_t pid_ = -1;
  int to_engine_ = -1, from_engine_ = -1;
  Clock::time_point quit_asked_{};
  std::string buffer_;           // output not yet taken as lines: from begin_ on
  std::size_t begin_ = 0;        // the start of the first line not yet taken
  std::size_t scanned_ = 0;      // from begin_ to here holds no newline
  bool eof_ = false;
  std::vector<std::string> lines_;
  std::vector<std::string> declared_options_;
  std::function<void(const std::string&)> info_sink_;
};

// Kills the process group of every engine alive in this process (SIGKILL), then what
// kill_engine_orphans kills, for a process that is about to end without running
// destructors: a PostgreSQL backend ending with FATAL, a command-line program killed by a
// signal. Async-signal-safe.
void kill_live_engine_groups() noexcept;
// Kills (SIGKILL) every child of this process that is not a live engine and not in this
// process's own process group (popen's and COPY ... PROGRAM's children are), and reaps those
// already gone: descendants of engines adopted as their subreaper. Stopping an engine does
// this itself, and waits for them. Async-signal-safe (it reads /proc by system calls).
void kill_engine_orphans() noexcept;
// Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER), once; the first engine
// started does it. Returns whether it is one.
bool become_child_subreaper() noexcept;
// How many engine process groups are alive in this process (tests).
int live_engine_groups() noexcept;

}  // namespace pgmate::arena
