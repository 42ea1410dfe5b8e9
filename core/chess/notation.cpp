#include "chess/notation.h"

#include "common/text.h"

namespace pgmate::chess {

namespace {

constexpr std::string_view kPromotionChars = "nbrq";  // indexed by type - kKnight

std::string quoted(std::string_view s) { return quote_input(s, 60); }

bool is_piece_letter(char c) { return c == 'N' || c == 'B' || c == 'R' || c == 'Q' || c == 'K'; }

PieceType piece_from_letter(char c) {
  switch (c) {
    case 'N': case 'n': return kKnight;
    case 'B': case 'b': return kBishop;
    case 'R': case 'r': return kRook;
    case 'Q': case 'q': return kQueen;
    case 'K': case 'k': return kKing;
    default: return kNoPieceType;
  }
}

}  // namespace

std::string to_uci(Move m) {
  if (m.is_null()) return "0000";
  std::string s = square_name(m.from()) + square_name(m.to());
  if (m.kind() == kPromotion) s += kPromotionChars[m.promotion() - kKnight];
  return s;
}

Move parse_uci_syntax(std::string_view text) {
  if (text.size() != 4 && text.size() != 5)
    throw ParseError("invalid UCI move " + quoted(text) + ": expected 4 or 5 characters like e2e4 or e7e8q");
  Square from = parse_square(text.substr(0, 2)), to = parse_square(text.substr(2, 2));
  if (from == kNoSquare) throw ParseError("invalid UCI move " + quoted(text) + ": " + quoted(text.substr(0, 2)) + " is not a square");
  if (to == kNoSquare) throw ParseError("invalid UCI move " + quoted(text) + ": " + quoted(text.substr(2, 2)) + " is not a square");
  if (from == to) throw ParseError("invalid UCI move " + quoted(text) + ": from and to are the same square");
  if (text.size() == 5) {
    size_t p = kPromotionChars.find(text[4]);
    if (p == std::string_view::npos)
      throw ParseError("invalid UCI move " + quoted(text) + ": promotion piece must be one of n, b, r, q");
    return Move(from, to, kPromotion, PieceType(kKnight + p));
  }
  return Move(from, to);
}

bool is_legal(const Board& b, Move m) {
  MoveList list;
  legal_moves(b, list);
  for (Move x : list)
    if (x == m) return true;
  return false;
}

Move resolve_move(const Board& b, Move wanted) {
  MoveList list;
  legal_moves(b, list);
  for (Move m : list) {
    if (m.from() != wanted.from() || m.to() != wanted.to()) continue;
    if (m.kind() == kPromotion) {
      if (wanted.kind() == kPromotion && m.promotion() == wanted.promotion()) return m;
    } else if (wanted.kind() != kPromotion) {
      return m;
    }
  }
  if (wanted.kind() != kPromotion) {
    for (Move m : list)
      if (m.from() == wanted.from() && m.to() == wanted.to())
        throw IllegalMove("illegal move " + quoted(to_uci(wanted)) + " in " + to_fen(b) +
                          ": a promotion needs its piece, e.g. " + to_uci(m));
  }
  throw IllegalMove("illegal move " + quoted(to_uci(wanted)) + " in " + to_fen(b));
}

void play_checked(Board& b, Move m) {
  const bool resets_clock = type_of(b.piece_on(m.from())) == kPawn || b.piece_on(m.to()) != kNoPiece;
  const char* counter = b.side == kBlack && b.fullmove == 0xFFFF ? "the fullmove number"
                        : b.halfmove == 0xFFFF && !resets_clock  ? "the halfmove clock"
                                                                 : nullptr;
  if (counter)
    throw IllegalMove("move " + quoted(to_uci(m)) + " in " + to_fen(b) + " cannot be played: " + counter +
                      " would pass 65535, the largest a board holds");
  b.play(m);
}

Move parse_uci(const Board& b, std::string_view text) { return resolve_move(b, parse_uci_syntax(text)); }

std::string to_san(const Board& b, Move m) {
  std::string s;
  const Piece moving = b.piece_on(m.from());
  const PieceType type = type_of(moving);
  if (m.kind() == kCastling) {
    s = m.to() > m.from() ? "O-O" : "O-O-O";
  } else {
    const bool capture = b.piece_on(m.to()) != kNoPiece || m.kind() == kEnPassant;
    if (type == kPawn) {
      if (capture) s += char('a' + file_of(m.from()));
    } else {
      s += "PNBRQK"[type];
      // Disambiguate by file, then rank, then both, among legal moves of the same kind.
      MoveList list;
      legal_moves(b, list);
      bool ambiguous = false, same_file = false, same_rank = false;
      for (Move o : list) {
        if (o == m || o.to() != m.to() || o.from() == m.from() || b.piece_on(o.from()) != moving) continue;
        ambiguous = true;
        if (file_of(o.from()) == file_of(m.from())) same_file = true;
        if (rank_of(o.from()) == rank_of(m.from())) same_rank = true;
      }
      if (ambiguous) {
        if (!same_file)
          s += char('a' + file_of(m.from()));
        else if (!same_rank)
          s += char('1' + rank_of(m.from()));
        else
          s += square_name(m.from());
      }
    }
    if (capture) s += 'x';
    s += square_name(m.to());
    if (m.kind() == kPromotion) {
      s += '=';
      s += "PNBRQK"[m.promotion()];
    }
  }
  Board next = b;
  next.play(m);
  if (next.in_check()) s += count_legal_moves(next) == 0 ? '#' : '+';
  return s;
}

Move parse_san(const Board& b, std::string_view text) {
  const std::string_view original = text;
  auto illegal = [&](const std::string& why) -> IllegalMove {
    return IllegalMove("illegal move " + quoted(original) + " in " + to_fen(b) + ": " + why);
  };
  // Strip annotations and check marks from the end, and "e.p." anywhere at the end.
  while (!text.empty() && (text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == ' ')) text.remove_prefix(1);
  if (text.size() >= 4 && text.substr(text.size() - 4) == "e.p.") text.remove_suffix(4);
  while (!text.empty() && (text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.back() == '+' || text.back() == '#' || text.back() == '!' || text.back() == '?'))
    text.remove_suffix(1);
  if (text.empty()) throw ParseError("invalid SAN move " + quoted(original) + ": empty");

  MoveList list;
  legal_moves(b, list);

  if (text == "O-O" || text == "0-0" || text == "O-O-O" || text == "0-0-0") {
    bool king_side = text.size() == 3;
    for (Move m : list)
      if (m.kind() == kCastling && (m.to() > m.from()) == king_side) return m;
    throw illegal("castling is not legal here");
  }

  // UCI text is accepted too (many tools mix them).
  if ((text.size() == 4 || text.size() == 5) && parse_square(text.substr(0, 2)) != kNoSquare &&
      parse_square(text.substr(2, 2)) != kNoSquare)
    return parse_uci(b, text);

  std::string_view t = text;
  PieceType type = kPawn;
  if (is_piece_letter(t[0])) {
    type = piece_from_letter(t[0]);
    t.remove_prefix(1);
  } else if (t[0] == 'P') {
    t.remove_prefix(1);
  }
  // Promotion suffix: "=Q", "Q", "=q", "(Q)".
  PieceType promotion = kNoPieceType;
  if (type == kPawn && !t.empty()) {
    std::string_view rest = t;
    if (rest.back() == ')' && rest.size() >= 3 && rest[rest.size() - 3] == '(') {
      promotion = piece_from_letter(rest[rest.size() - 2]);
      rest.remove_suffix(3);
    } else if (piece_from_letter(rest.back()) != kNoPieceType && rest.back() != 'b' && rest.size() >= 2 &&
               (rest[rest.size() - 2] == '=' || (rest[rest.size() - 2] >= '1' && rest[rest.size() - 2] <= '8'))) {
      promotion = piece_from_letter(rest.back());
      rest.remove_suffix(1);
    } else if (rest.back() == 'b' && rest.size() >= 2 && rest[rest.size() - 2] == '=') {
      promotion = kBishop;
      rest.remove_suffix(1);
    }
    if (promotion == kKing) throw ParseError("invalid SAN move " + quoted(original) + ": cannot promote to a king");
    if (!rest.empty() && rest.back() == '=') rest.remove_suffix(1);
    t = rest;
  }
  // What remains: [from file][from rank][x|-|:]to-square
  if (t.size() < 2) throw ParseError("invalid SAN move " + quoted(original) + ": no destination square");
  Square to = parse_square(t.substr(t.size() - 2));
  if (to == kNoSquare)
    throw ParseError("invalid SAN move " + quoted(original) + ": " + quoted(t.substr(t.size() - 2)) + " is not a square");
  t.remove_suffix(2);
  if (!t.empty() && (t.back() == 'x' || t.back() == ':' || t.back() == '-')) t.remove_suffix(1);
  int from_file = -1, from_rank = -1;
  for (char c : t) {
    if (c >= 'a' && c <= 'h' && from_file < 0)
      from_file = c - 'a';
    else if (c >= '1' && c <= '8' && from_rank < 0)
      from_rank = c - '1';
    else
      throw ParseError("invalid SAN move " + quoted(original) + ": unexpected " + quoted(std::string_view(&c, 1)));
  }

  Move found;
  int matches = 0;
  for (Move m : list) {
    if (m.to() != to || type_of(b.piece_on(m.from())) != type) continue;
    if (from_file >= 0 && file_of(m.from()) != from_file) continue;
    if (from_rank >= 0 && rank_of(m.from()) != from_rank) continue;
    if (m.kind() == kCastling) continue;
    if (m.kind() == kPromotion) {
      if (promotion == kNoPieceType) {
        throw illegal("a promotion needs its piece, e.g. " + to_san(b, m));
      }
      if (m.promotion() != promotion) continue;
    } else if (promotion != kNoPieceType) {
      continue;
    }
    found = m;
    ++matches;
  }
  if (matches == 1) return found;
  if (matches > 1) throw illegal("ambiguous; add the file or rank of the moving piece");
  throw illegal("no legal move matches");
}

}  // namespace pgmate::chess
