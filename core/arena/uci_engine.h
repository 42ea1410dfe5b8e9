// An external UCI engine (Stockfish, pgmate uci, ...) as a child process on pipes. No
// shell: the command is split at blanks. Everything it is asked waits at most a deadline,
// so an engine that hangs, dies or talks nonsense costs a UciError, never a hung match.
#pragma once

#include <sys/types.h>

#include <chrono>
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

class UciEngine {
 public:
  // Starts the program and completes the handshake (uci ... uciok, the options, isready ...
  // readyok) within `start_timeout`. Throws UciError naming the command and what failed.
  UciEngine(const std::string& command, const std::vector<std::pair<std::string, std::string>>& options,
            std::chrono::milliseconds start_timeout = std::chrono::seconds(10));
  ~UciEngine();  // quit, then SIGKILL when it does not go within a second
  UciEngine(const UciEngine&) = delete;
  UciEngine& operator=(const UciEngine&) = delete;

  const std::string& name() const { return name_; }  // "id name", or the program

  // ucinewgame, isready ... readyok.
  void new_game(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // position fen START moves ... and go with the limits; does not wait.
  void go(const chess::Board& start, const std::vector<chess::Move>& moves, const UciLimits& limits);
  // The move text of "bestmove X" once it has arrived (waiting at most `wait`), else nullopt.
  // Throws UciError when the engine has died.
  std::optional<std::string> poll_bestmove(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Lines the engine wrote since the last go (info lines), for diagnostics.
  const std::vector<std::string>& last_lines() const { return lines_; }

  // How long a move with these limits may take before the engine is declared hung.
  static std::chrono::milliseconds move_deadline(const UciLimits& limits);

 private:
  void shutdown();
  void send(const std::string& line);
  // Reads what is available within `wait`; false at end of file.
  bool read_some(std::chrono::milliseconds wait);
  std::optional<std::string> next_line();
  std::string wait_for(const std::string& prefix, std::chrono::milliseconds timeout, const char* asked);

  std::string command_, name_;
  pid_t pid_ = -1;
  int to_engine_ = -1, from_engine_ = -1;
  std::string buffer_;
  std::vector<std::string> lines_;
};

}  // namespace pgmate::arena
