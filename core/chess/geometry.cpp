#include "chess/geometry.h"

#include <stdexcept>

#include "chess/fen.h"
#include "common/text.h"

namespace pgmate::chess {
namespace {

enum class Geo { kKing, kQueen, kRook, kBishop, kKnight, kWhitePawn, kBlackPawn, kCastling };
constexpr int kGeoCount = 8;

const char* const kNames[kGeoCount] = {"king",   "queen",      "rook",       "bishop",
                                       "knight", "white_pawn", "black_pawn", "castling"};

std::string valid_names() {
  std::string out;
  for (int i = 0; i < kGeoCount; ++i) {
    if (i) out += ", ";
    out += kNames[i];
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? char(a[i] + ('a' - 'A')) : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

Geo parse_geo(std::string_view name) {
  for (int i = 0; i < kGeoCount; ++i)
    if (iequals(name, kNames[i])) return Geo(i);
  throw std::invalid_argument("unknown piece " + quote_input(name, 40) + " (valid: " + valid_names() + ")");
}

void check_square(Square s) {
  if (s < 0 || s > 63)
    throw std::invalid_argument("square " + std::to_string(s) + " is outside 0..63 (a1 = 0, h8 = 63)");
}

bool is_pawn(Geo g) { return g == Geo::kWhitePawn || g == Geo::kBlackPawn; }

// Targets of piece g from s on an empty board.
Bitboard targets(Geo g, Square s) {
  switch (g) {
    case Geo::kKing: return king_attacks(s);
    case Geo::kQueen: return queen_attacks(s, 0);
    case Geo::kRook: return rook_attacks(s, 0);
    case Geo::kBishop: return bishop_attacks(s, 0);
    case Geo::kKnight: return knight_attacks(s);
    case Geo::kWhitePawn:
    case Geo::kBlackPawn: {
      const Color c = g == Geo::kWhitePawn ? kWhite : kBlack;
      const int r = rank_of(s);
      if (r == 0 || r == 7) return 0;
      const int up = c == kWhite ? 8 : -8;
      Bitboard t = pawn_attacks(c, s) | bb(s + up);
      if (r == (c == kWhite ? 1 : 6)) t |= bb(s + 2 * up);
      return t;
    }
    case Geo::kCastling:
      if (s == 4) return bb(2) | bb(6);
      if (s == 60) return bb(58) | bb(62);
      return 0;
  }
  return 0;
}

int squares_crossed(Geo g, Square from, Square to) {
  if (g == Geo::kKnight) return 0;  // a jump passes over no square of a line
  const int df = file_of(to) - file_of(from), dr = rank_of(to) - rank_of(from);
  const int adf = df < 0 ? -df : df, adr = dr < 0 ? -dr : dr;
  return (adf > adr ? adf : adr) - 1;  // Chebyshev distance minus one
}

void append_moves(Geo g, std::vector<GeometricMove>& out) {
  const std::string name = kNames[int(g)];
  for (Square from = 0; from < 64; ++from)
    for (Bitboard t = targets(g, from); t;) {
      const Square to = pop_lsb(t);
      out.push_back(GeometricMove{name, from, to, squares_crossed(g, from, to)});
    }
}

}  // namespace

const std::vector<std::string>& geometry_piece_names() {
  static const std::vector<std::string> names(kNames, kNames + kGeoCount);
  return names;
}

std::vector<GeometricMove> move_table() {
  std::vector<GeometricMove> out;
  out.reserve(3952);
  for (int i = 0; i < kGeoCount; ++i) append_moves(Geo(i), out);
  return out;
}

std::vector<GeometricMove> move_table(std::string_view piece) {
  std::vector<GeometricMove> out;
  append_moves(parse_geo(piece), out);
  return out;
}

SquareMatrix bitboard_matrix(Bitboard set) {
  SquareMatrix m{};
  for (Square s = 0; s < 64; ++s) m[7 - rank_of(s)][file_of(s)] = (set >> s) & 1 ? 1 : 0;
  return m;
}

SquareMatrix move_mask(std::string_view piece, Square s) {
  const Geo g = parse_geo(piece);
  check_square(s);
  if (is_pawn(g) && (rank_of(s) == 0 || rank_of(s) == 7))
    throw std::invalid_argument(std::string(kNames[int(g)]) + " cannot stand on " + square_name(s) +
                                " (pawns never stand on rank 1 or 8)");
  return bitboard_matrix(targets(g, s));
}

SquareMatrix attack_mask(const Board& b, Square s) {
  check_square(s);
  const Piece p = b.piece_on(s);
  if (p == kNoPiece) throw std::invalid_argument("no piece on " + square_name(s));
  if (type_of(p) >= kNoPieceType || color_of(p) > kBlack)
    throw std::invalid_argument("invalid piece code on " + square_name(s));
  return bitboard_matrix(attacks_of(type_of(p), color_of(p), s, b.occupied()));
}

}  // namespace pgmate::chess
