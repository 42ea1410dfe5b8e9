// Searching games by what their positions hold, beyond exact positions: material
// ("KRPvKR": rook and pawn against rook) and sub-FEN patterns ("a white pawn on d4, the
// e-file empty, anything elsewhere"). Each game is replayed and every position tested; a
// game that can no longer reach the material (captures only take men away) stops early.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "chess/board.h"

namespace pgmate::gamedb {

// How many queens, rooks, bishops, knights and pawns each side has (kings are implied).
struct Material {
  std::array<std::array<std::uint8_t, 5>, 2> counts{};  // [colour][queen, rook, bishop, knight, pawn]

  static Material of(const chess::Board& b);
  // "KRPvKR", "KQvK", "KvK": White's men, 'v', Black's, each a K then Q R B N P letters in
  // any order (repeated for counts: "KRRPPPvKRPP"). Throws chess::ParseError naming the text.
  static Material parse(std::string_view text);
  // The canonical text: K, then Q R B N P, e.g. "KRPvKR".
  std::string text() const;
  // Men of a side besides the king; no capture or promotion ever raises it.
  int men(int color) const;
  bool operator==(const Material&) const = default;
};

// A sub-FEN: eight ranks from the 8th, '/' between; a piece letter (PNBRQK, pnbrqk) is that
// piece on that square, '.' an empty square, '?' or a digit n (n squares) anything. E.g.
// "8/8/8/8/3P4/8/8/8" (a white pawn on d4) or "????.???/8/8/8/8/8/8/8" (e8 empty).
class Pattern {
 public:
  // Throws chess::ParseError naming the text and what is wrong.
  static Pattern parse(std::string_view text);
  bool matches(const chess::Board& b) const;

 private:
  std::array<chess::Bitboard, 12> pieces_{};  // [colour * 6 + type]: where each must stand
  chess::Bitboard empty_ = 0;                 // squares that must be empty
};

// A game's material summary, stored with it (pgmate.games.material_signature): its final
// material (4 bits a count) and whether a pawn promoted. Captures only take men away, and
// without a promotion pieces of each kind too, so a game whose final material exceeds a
// wanted one cannot have passed through it: may_reach says so without a replay.
std::uint64_t material_signature(const chess::Board& start, std::span<const chess::Move> moves);
bool may_reach(std::uint64_t signature, const Material& material);

// Whether some position of the game (start, then after each move) has the material, or
// matches the pattern. Moves are resolved as the games table stores them (from, to,
// promotion); an illegal move throws chess::IllegalMove.
bool reaches_material(const chess::Board& start, std::span<const chess::Move> moves, const Material& material);
bool reaches_pattern(const chess::Board& start, std::span<const chess::Move> moves, const Pattern& pattern);

}  // namespace pgmate::gamedb
