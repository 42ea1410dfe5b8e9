// Searching games by what their positions hold, beyond exact positions: material
// ("KRPvKR": rook and pawn against rook) and sub-FEN patterns ("a white pawn on d4, the
// e-file empty, anything elsewhere"). Each game is replayed and every position tested; a
// game that can no longer reach the material (captures only take men away) stops early.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chess/board.h"
#include "gamedb/position_index.h"

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

struct SquareSignature;

// A sub-FEN: eight ranks from the 8th, '/' between; a piece letter (PNBRQK, pnbrqk) is that
// piece on that square, '.' an empty square, '?' or a digit n (n squares) anything. E.g.
// "8/8/8/8/3P4/8/8/8" (a white pawn on d4) or "????.???/8/8/8/8/8/8/8" (e8 empty).
class Pattern {
 public:
  // Throws chess::ParseError naming the text and what is wrong.
  static Pattern parse(std::string_view text);
  bool matches(const chess::Board& b) const;

  // False when a game whose men never stood on some square the pattern needs them on
  // (its SquareSignature) cannot have matched; true says only "maybe".
  bool may_match(const SquareSignature& visited) const;

  // False when no later position of a game through `b` can match: some pawn the pattern
  // needs has no pawn of its colour left that could still walk there (pawns never go back
  // and change files only by capturing, one file a rank), as SCID prunes by home pawns.
  bool still_possible(const chess::Board& b) const;

 private:
  std::array<chess::Bitboard, 12> pieces_{};  // [colour * 6 + type]: where each must stand
  chess::Bitboard empty_ = 0;                 // squares that must be empty
  // For each pawn the pattern needs: the squares a pawn of its colour must stand on to reach
  // it (its cone), White's first.
  std::array<chess::Bitboard, 16> pawn_cones_{};
  std::uint8_t white_cones_ = 0, cones_ = 0;
};

// A game's material summary, stored with it (pgmate.games.material_signature): its final
// material (4 bits a count) and whether a pawn promoted. Captures only take men away, and
// without a promotion pieces of each kind too, so a game whose final material exceeds a
// wanted one cannot have passed through it: may_reach says so without a replay.
std::uint64_t material_signature(const chess::Board& start, std::span<const chess::Move> moves);
bool may_reach(std::uint64_t signature, const Material& material);

// The squares each side's king, pawns and other pieces stood on at some point of a game
// (pgmate.games.square_signature, 48 bytes): a pattern that needs a white king on h8 rules
// out every game whose white king never went there, without a replay (Pattern::may_match).
struct SquareSignature {
  static constexpr int kKing = 0, kPawns = 1, kPieces = 2;  // the three kinds of men
  static constexpr std::size_t kBytes = 48;
  std::array<chess::Bitboard, 6> visited{};  // [colour * 3 + kind]

  static int kind(chess::PieceType t) { return t == chess::kKing ? kKing : t == chess::kPawn ? kPawns : kPieces; }
  void add(const chess::Board& b);
  std::array<std::uint8_t, kBytes> bytes() const;  // little-endian, in `visited` order
  // Throws chess::ParseError unless there are exactly kBytes bytes.
  static SquareSignature from_bytes(std::span<const std::uint8_t> bytes);
};

// Everything one replay of a game yields for storing it: whether every move is legal (the
// games table's CHECK) and, when so, both signatures. Given `entries`, the same replay
// appends the game's position index entries there (game 0, result unknown: the caller's to
// fill in with EntryCode::with_result), for a legal game only.
struct GameSummary {
  bool legal = false;
  std::uint64_t material_signature = 0;
  SquareSignature squares;
};
GameSummary summarize(const chess::Board& start, std::span<const chess::Move> moves,
                      std::vector<PositionEntry>* entries = nullptr);

// Whether some position of the game (start, then after each move) has the material, or
// matches the pattern. Moves are resolved as the games table stores them (from, to,
// promotion); an illegal move throws chess::IllegalMove. Once the answer is known the
// remaining moves are not played (their legality is the games table's CHECK).
bool reaches_material(const chess::Board& start, std::span<const chess::Move> moves, const Material& material);
// (A pattern's replay also ends once Pattern::still_possible says no.)
bool reaches_pattern(const chess::Board& start, std::span<const chess::Move> moves, const Pattern& pattern);

}  // namespace pgmate::gamedb
