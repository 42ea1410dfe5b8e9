#include "chess/fen.h"

#include <charconv>
#include <vector>

#include "common/text.h"

namespace pgmate::chess {

namespace {

constexpr std::string_view kPieceChars = "PNBRQK";

std::string quoted(std::string_view s) { return quote_input(s, 120); }

[[noreturn]] void fail(std::string_view fen, const std::string& why) {
  throw ParseError("invalid FEN " + quoted(fen) + ": " + why);
}

std::string char_desc(char c) {
  if (c >= 33 && c < 127) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size()) break;
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    fields.push_back(s.substr(i, j - i));
    i = j;
  }
  return fields;
}

int parse_clock(std::string_view fen, std::string_view field, const char* name, int min) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || ptr != field.data() + field.size() || field[0] == '+')
    fail(fen, std::string(name) + " " + quoted(field) + " is not a whole number");
  if (value < min || value > 65535)
    fail(fen, std::string(name) + " " + quoted(field) + " is out of range (" + std::to_string(min) +
                  " to 65535)");
  return value;
}

}  // namespace

char piece_char(Piece p) {
  if (p == kNoPiece) return '.';
  char c = kPieceChars[type_of(p)];
  return color_of(p) == kWhite ? c : char(c + ('a' - 'A'));
}

std::string square_name(Square s) {
  return {char('a' + file_of(s)), char('1' + rank_of(s))};
}

Square parse_square(std::string_view t) {
  if (t.size() != 2 || t[0] < 'a' || t[0] > 'h' || t[1] < '1' || t[1] > '8') return kNoSquare;
  return make_square(t[0] - 'a', t[1] - '1');
}

namespace {
template <class What>
void check_position(const Board& b, const What& what);
}  // namespace

Board parse_fen(std::string_view fen) {
  if (fen == "startpos") fen = kStartFen;
  for (char c : fen)
    if (c == '\t' || c == '\n' || c == '\r') fail(fen, "contains a tab or line break");
  auto fields = split_fields(fen);
  if (fields.empty()) fail(fen, "empty");
  if (fields.size() < 4)
    fail(fen, "has " + std::to_string(fields.size()) +
                  " field(s); expected 6 (placement, side, castling, en passant, halfmove, fullmove)");
  if (fields.size() > 6) fail(fen, "has more than 6 fields");

  Board b;
  b.clear();

  // Field 1: placement, rank 8 first.
  std::string_view placement = fields[0];
  int rank = 7, file = 0;
  bool last_was_digit = false;
  for (size_t i = 0; i < placement.size(); ++i) {
    char c = placement[i];
    // Built only for an error: FEN is parsed for every stored game.
    const auto at = [&] { return "field 1 (placement), character " + char_desc(c) + " at offset " + std::to_string(i); };
    if (c == '/') {
      if (file != 8) fail(fen, at() + ": rank " + std::to_string(rank + 1) + " has " + std::to_string(file) + " squares, not 8");
      if (rank == 0) fail(fen, at() + ": more than 8 ranks");
      --rank;
      file = 0;
      last_was_digit = false;
    } else if (c >= '1' && c <= '8') {
      if (last_was_digit) fail(fen, at() + ": two digits in a row");
      file += c - '0';
      if (file > 8) fail(fen, at() + ": rank " + std::to_string(rank + 1) + " has more than 8 squares");
      last_was_digit = true;
    } else {
      size_t t = kPieceChars.find(char(c & ~0x20));
      if (t == std::string_view::npos || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
        fail(fen, at() + ": not a piece letter (PNBRQK, pnbrqk), digit 1-8 or '/'");
      if (file >= 8) fail(fen, at() + ": rank " + std::to_string(rank + 1) + " has more than 8 squares");
      Color color = (c >= 'a') ? kBlack : kWhite;
      b.put(make_piece(color, PieceType(t)), make_square(file, rank));
      ++file;
      last_was_digit = false;
    }
  }
  if (rank != 0) fail(fen, "field 1 (placement) has " + std::to_string(8 - rank) + " ranks, not 8");
  if (file != 8) fail(fen, "field 1 (placement): rank 1 has " + std::to_string(file) + " squares, not 8");

  // Field 2: side to move.
  if (fields[1] == "w")
    b.side = kWhite;
  else if (fields[1] == "b")
    b.side = kBlack;
  else
    fail(fen, "field 2 (side to move) is " + quoted(fields[1]) + "; expected 'w' or 'b'");

  // Field 3: castling rights.
  std::string_view castling = fields[2];
  if (castling != "-") {
    for (size_t i = 0; i < castling.size(); ++i) {
      char c = castling[i];
      std::uint8_t right = c == 'K' ? kWhiteOO : c == 'Q' ? kWhiteOOO : c == 'k' ? kBlackOO : c == 'q' ? kBlackOOO : 0;
      const auto at = [&] { return "field 3 (castling), character " + char_desc(c) + " at offset " + std::to_string(i); };
      if (!right) fail(fen, at() + ": expected '-' or letters from KQkq");
      if (b.castling & right) fail(fen, at() + ": repeated");
      b.castling |= right;
    }
  }

  // Field 4: en-passant target square.
  std::string_view ep = fields[3];
  if (ep != "-") {
    Square s = parse_square(ep);
    if (s == kNoSquare) fail(fen, "field 4 (en passant) " + quoted(ep) + " is not '-' or a square");
    b.ep = std::uint8_t(s);
  }

  b.halfmove = fields.size() > 4 ? std::uint16_t(parse_clock(fen, fields[4], "field 5 (halfmove clock)", 0)) : 0;
  b.fullmove = fields.size() > 5 ? std::uint16_t(parse_clock(fen, fields[5], "field 6 (fullmove number)", 1)) : 1;

  check_position(b, [&] { return "FEN " + quoted(fen); });  // the name is built only for an error

  // Keep the en-passant square only if a pawn of the side to move could take on it.
  if (b.ep != kNoSquare && !(pawn_attacks(~b.side, b.ep) & b.pieces(b.side, kPawn))) b.ep = kNoSquare;
  b.key = b.compute_key();
  return b;
}

namespace {

template <class What>
void check_position(const Board& b, const What& what) {
  auto reject = [&](const std::string& why) { throw ParseError("invalid " + what() + ": " + why); };
  const char* names[2] = {"White", "Black"};
  for (Color c : {kWhite, kBlack}) {
    int kings = popcount(b.pieces(c, kKing));
    if (kings == 0) reject(std::string(names[c]) + " has no king");
    if (kings > 1) reject(std::string(names[c]) + " has " + std::to_string(kings) + " kings");
    if (popcount(b.pieces(c, kPawn)) > 8) reject(std::string(names[c]) + " has more than 8 pawns");
    if (popcount(b.pieces(c)) > 16) reject(std::string(names[c]) + " has more than 16 pieces");
  }
  if (Bitboard p = b.pieces(kPawn) & (kRank1 | kRank8))
    reject("pawn on " + square_name(lsb(p)) + " (pawns cannot stand on the first or last rank)");

  Board other = b;
  other.side = ~b.side;
  if (other.in_check())
    reject(std::string(names[~b.side]) + " is in check but it is " + names[b.side] + " to move");
  if (popcount(b.checkers()) > 2) reject(std::string(names[b.side]) + " is checked by more than two pieces");

  struct Need { std::uint8_t right; Square king, rook; const char* letter; };
  const Need needs[4] = {{kWhiteOO, 4, 7, "K"}, {kWhiteOOO, 4, 0, "Q"}, {kBlackOO, 60, 63, "k"}, {kBlackOOO, 60, 56, "q"}};
  for (const Need& n : needs) {
    if (!(b.castling & n.right)) continue;
    Color c = n.king == 4 ? kWhite : kBlack;
    if (b.piece_on(n.king) != make_piece(c, kKing))
      reject(std::string("castling right '") + n.letter + "' but no " + (c == kWhite ? "white" : "black") + " king on " + square_name(n.king));
    if (b.piece_on(n.rook) != make_piece(c, kRook))
      reject(std::string("castling right '") + n.letter + "' but no " + (c == kWhite ? "white" : "black") + " rook on " + square_name(n.rook));
  }

  if (b.ep != kNoSquare) {
    Square ep = b.ep;
    // White to move: Black just pushed to rank 5, the target is on rank 6.
    int want_rank = b.side == kWhite ? 5 : 2;
    std::string name = "en-passant square " + square_name(ep);
    if (rank_of(ep) != want_rank)
      reject(name + " must be on rank " + std::to_string(want_rank + 1) + " when " + names[b.side] + " is to move");
    int dir = b.side == kWhite ? -8 : 8;  // toward the pushed pawn
    if (b.piece_on(ep + dir) != make_piece(~b.side, kPawn))
      reject(name + ": no " + (b.side == kWhite ? "black" : "white") + " pawn on " + square_name(ep + dir) + " that could have just moved two squares");
    if (b.piece_on(ep) != kNoPiece || b.piece_on(ep - dir) != kNoPiece)
      reject(name + ": the squares the pawn passed (" + square_name(ep) + ", " + square_name(ep - dir) + ") must be empty");
  }
}

}  // namespace

void validate_position(const Board& b, std::string_view what) {
  check_position(b, [&] { return std::string(what); });
}

std::string to_fen(const Board& b) {
  std::string s;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      Piece p = b.piece_on(make_square(file, rank));
      if (p == kNoPiece) {
        ++empty;
        continue;
      }
      if (empty) s += char('0' + empty);
      empty = 0;
      s += piece_char(p);
    }
    if (empty) s += char('0' + empty);
    if (rank) s += '/';
  }
  s += b.side == kWhite ? " w " : " b ";
  if (!b.castling) s += '-';
  if (b.castling & kWhiteOO) s += 'K';
  if (b.castling & kWhiteOOO) s += 'Q';
  if (b.castling & kBlackOO) s += 'k';
  if (b.castling & kBlackOOO) s += 'q';
  s += ' ';
  s += b.ep == kNoSquare ? "-" : square_name(b.ep);
  s += ' ' + std::to_string(b.halfmove) + ' ' + std::to_string(b.fullmove);
  return s;
}

}  // namespace pgmate::chess
