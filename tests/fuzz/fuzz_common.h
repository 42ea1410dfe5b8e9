// Shared helpers for the libFuzzer targets: a CHECK that aborts, board comparison, and
// the fixed positions the move-notation targets start from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "chess/packed.h"

namespace pgmate::fuzz {

using namespace pgmate::chess;

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

[[noreturn]] inline void fail_with(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz inconsistency: %s: %s\n", what, detail.c_str());
  std::abort();
}

inline bool same_board(const Board& a, const Board& b) {
  return std::memcmp(a.by_color, b.by_color, sizeof a.by_color) == 0 &&
         std::memcmp(a.by_type, b.by_type, sizeof a.by_type) == 0 &&
         std::memcmp(a.mailbox, b.mailbox, sizeof a.mailbox) == 0 && a.side == b.side &&
         a.castling == b.castling && a.ep == b.ep && a.halfmove == b.halfmove &&
         a.fullmove == b.fullmove && a.key == b.key;
}

// Positions rich in special moves: castling both ways, en passant (one of them pinned),
// promotions with and without capture, checks and pins.
inline constexpr const char* kPositions[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "4k3/8/8/KPp4r/8/8/8/8 w - c6 0 2",
    "2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1",
    "3r4/4Pk2/8/8/8/8/8/K7 w - - 0 1",
    "r3k2r/1P6/8/8/8/8/1p6/R3K2R b KQkq - 0 1",
};
inline constexpr int kPositionCount = int(sizeof kPositions / sizeof kPositions[0]);

// The first byte picks the position; the rest is split into lines, one move per line.
template <class F>
void for_each_line(const std::uint8_t* data, std::size_t size, F&& f) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (true) {
    std::size_t nl = rest.find('\n');
    if (!f(rest.substr(0, nl))) return;
    if (nl == std::string_view::npos) return;
    rest.remove_prefix(nl + 1);
  }
}

// After a legal move the board must stay consistent: key, rules, FEN and packed forms.
inline void check_after_move(const Board& before, Move m, Board& after) {
  after = before;
  after.play(m);
  FUZZ_CHECK(after.key == after.compute_key());
  try {
    validate_position(after, "board after a legal move");
    Board again = parse_fen(to_fen(after));
    if (!same_board(again, after)) fail_with("FEN round trip after move", to_fen(after));
  } catch (const ParseError& e) {
    fail_with("legal move produced an invalid board", to_fen(before) + " " + to_uci(m) + ": " + e.what());
  }
}

}  // namespace pgmate::fuzz
