#include "chess/notation.h"

#include "chess/movegen.h"

#include "common/text.h"

namespace pgmate::chess {

namespace {

constexpr std::string_view kPromotionChars = "nbrq";  // indexed by type - kKnight

std::string quoted(std::string_view s) { return quote_input(s, 60); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

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

namespace detail {
void check_counters(const Board& b, Move m) {
  const auto resets_clock = [&] { return type_of(b.piece_on(m.from())) == kPawn || b.piece_on(m.to()) != kNoPiece; };
  const char* counter = b.side == kBlack && b.fullmove == 0xFFFF     ? "the fullmove number"
                        : b.halfmove == 0xFFFF && !resets_clock() ? "the halfmove clock"
                                                                   : nullptr;
  if (counter)
    throw IllegalMove("move " + quoted(to_uci(m)) + " in " + to_fen(b) + " cannot be played: " + counter +
                      " would pass 65535, the largest a board holds");
}
}  // namespace detail

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

namespace {

// A SAN (or long algebraic) move taken apart, before the board is asked.
struct SanMove {
  bool castling = false, king_side = false;
  bool uci = false;  // plain coordinates like g1f3 or e7e8q: resolved as UCI
  PieceType type = kPawn;
  PieceType promotion = kNoPieceType;
  Square to = kNoSquare;
  int from_file = -1, from_rank = -1;
};

// Splits `text` into its parts; throws ParseError for text that is not a move.
// `stripped` gets the text without annotations, check marks and en-passant marks.
SanMove split_san(const Board& b, std::string_view text, std::string_view& stripped) {
  const std::string_view original = text;
  // Strip annotations and check marks from the end, and an en-passant mark ("e.p.",
  // "e.p", or "ep" right after the square).
  while (!text.empty() && (text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == ' ')) text.remove_prefix(1);
  if (!text.empty() && (text.back() == '.' || text.back() == 'p')) {
    if (text.ends_with("e.p.")) text.remove_suffix(4);
    else if (text.ends_with("e.p")) text.remove_suffix(3);
    else if (text.size() > 2 && text.ends_with("ep") && is_digit(text[text.size() - 3])) text.remove_suffix(2);
  }
  while (!text.empty() && (text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.back() == '+' || text.back() == '#' || text.back() == '!' || text.back() == '?'))
    text.remove_suffix(1);
  if (text.empty()) throw ParseError("invalid SAN move " + quoted(original) + ": empty");
  stripped = text;

  SanMove san;
  if ((text[0] == 'O' || text[0] == '0') && (text == "O-O" || text == "0-0" || text == "O-O-O" || text == "0-0-0")) {
    san.castling = true;
    san.king_side = text.size() == 3;
    return san;
  }
  // UCI text is accepted too (many tools mix them).
  if ((text.size() == 4 || text.size() == 5) && parse_square(text.substr(0, 2)) != kNoSquare &&
      parse_square(text.substr(2, 2)) != kNoSquare) {
    san.uci = true;
    return san;
  }

  std::string_view t = text;
  if (is_piece_letter(t[0])) {
    san.type = piece_from_letter(t[0]);
    t.remove_prefix(1);
  } else if (t[0] == 'P') {
    t.remove_prefix(1);
  }
  // Promotion suffix: "=Q", "Q", "=q", "(Q)".
  if (san.type == kPawn && !t.empty()) {
    std::string_view rest = t;
    if (rest.back() == ')' && rest.size() >= 3 && rest[rest.size() - 3] == '(') {
      san.promotion = piece_from_letter(rest[rest.size() - 2]);
      rest.remove_suffix(3);
    } else if (piece_from_letter(rest.back()) != kNoPieceType && rest.back() != 'b' && rest.size() >= 2 &&
               (rest[rest.size() - 2] == '=' || (rest[rest.size() - 2] >= '1' && rest[rest.size() - 2] <= '8'))) {
      san.promotion = piece_from_letter(rest.back());
      rest.remove_suffix(1);
    } else if (rest.back() == 'b' && rest.size() >= 2 && rest[rest.size() - 2] == '=') {
      san.promotion = kBishop;
      rest.remove_suffix(1);
    }
    if (san.promotion == kKing)
      throw ParseError("invalid SAN move " + quoted(original) + ": cannot promote to a king");
    if (!rest.empty() && rest.back() == '=') rest.remove_suffix(1);
    t = rest;
  }
  // What remains: [from file][from rank][x|-|:]to-square
  if (t.size() < 2) throw ParseError("invalid SAN move " + quoted(original) + ": no destination square");
  san.to = parse_square(t.substr(t.size() - 2));
  if (san.to == kNoSquare)
    throw ParseError("invalid SAN move " + quoted(original) + ": " + quoted(t.substr(t.size() - 2)) +
                     " is not a square");
  t.remove_suffix(2);
  if (!t.empty() && (t.back() == 'x' || t.back() == ':' || t.back() == '-')) t.remove_suffix(1);
  for (char c : t) {
    if (c >= 'a' && c <= 'h' && san.from_file < 0)
      san.from_file = c - 'a';
    else if (c >= '1' && c <= '8' && san.from_rank < 0)
      san.from_rank = c - '1';
    else
      throw ParseError("invalid SAN move " + quoted(original) + ": unexpected " + quoted(std::string_view(&c, 1)));
  }
  // Long algebraic: with the from-square given in full, the piece letter may be left out
  // ("g1-f3" is the knight on g1); a king's two-square step is castling ("Ke1-g1", "e1-g1").
  if (san.from_file >= 0 && san.from_rank >= 0) {
    const Square from = make_square(san.from_file, san.from_rank);
    const Piece p = b.piece_on(from);
    if (p != kNoPiece && color_of(p) == b.side) {
      const PieceType on_from = type_of(p);
      if (san.type == kPawn && text[0] != 'P' && on_from != kPawn && san.promotion == kNoPieceType)
        san.type = on_from;
      if (san.type == kKing && on_from == kKing && rank_of(from) == rank_of(san.to) &&
          (san.to == from + 2 || san.to == from - 2)) {
        san.castling = true;
        san.king_side = san.to > from;
      }
    }
  }
  return san;
}

// The shapes nearly every PGN move has ("e4", "Nf3", "exd5", "Nxe5", "Nbd7", "R1e2", "Nbxd7",
// each with at most one '+' or '#'), read without the general splitter: false for anything
// else, which split_san then reads. For these it gives what split_san gives.
bool split_common_san(std::string_view t, SanMove& out) {
  if (!t.empty() && (t.back() == '+' || t.back() == '#')) t.remove_suffix(1);
  const std::size_t n = t.size();
  const auto is_file = [](char c) { return c >= 'a' && c <= 'h'; };
  const auto is_rank = [](char c) { return c >= '1' && c <= '8'; };
  if (n < 2 || n > 5 || !is_file(t[n - 2]) || !is_rank(t[n - 1])) return false;
  SanMove san;
  san.to = make_square(t[n - 2] - 'a', t[n - 1] - '1');
  if (n == 2) {  // a pawn's push
  } else if (is_piece_letter(t[0])) {
    san.type = piece_from_letter(t[0]);
    std::string_view between = t.substr(1, n - 3);  // disambiguation and capture mark
    if (!between.empty() && between.back() == 'x') between.remove_suffix(1);
    if (between.size() > 1) return false;
    if (between.size() == 1) {
      if (is_file(between[0])) san.from_file = between[0] - 'a';
      else if (is_rank(between[0])) san.from_rank = between[0] - '1';
      else return false;
    }
  } else if (n == 4 && is_file(t[0]) && t[1] == 'x') {  // a pawn's capture
    san.from_file = t[0] - 'a';
  } else {
    return false;
  }
  out = san;
  return true;
}

// Lines through each square on an empty board (the square itself excluded): 1 KiB.
struct LineTable {
  Bitboard straight[64], diagonal[64];
};
constexpr LineTable make_line_table() {
  LineTable t{};
  for (int s = 0; s < 64; ++s)
    for (int o = 0; o < 64; ++o) {
      const int files = o % 8 - s % 8, ranks = o / 8 - s / 8;
      if (o == s) continue;
      if (files == 0 || ranks == 0) t.straight[s] |= Bitboard{1} << o;
      else if (files == ranks || files == -ranks) t.diagonal[s] |= Bitboard{1} << o;
    }
  return t;
}
constexpr LineTable kLines = make_line_table();
Bitboard straight_lines(Square s) { return kLines.straight[s]; }
Bitboard diagonal_lines(Square s) { return kLines.diagonal[s]; }

// Squares strictly between a and b (empty unless they share a line): a 32 KiB table,
// where the slider attack tables are large enough to miss the cache on every lookup.
Bitboard strictly_between(Square a, Square b) { return between_and_target(a, b) & ~bb(b); }

// Whether a piece of `them` attacks square s once the board's occupancy is `occ`, with
// the pieces on `gone` (captured) left out.
bool attacked(const Board& b, Square s, Color them, Bitboard occ, Bitboard gone) {
  const Bitboard theirs = b.pieces(them) & ~gone;
  if ((knight_attacks(s) & b.pieces(kKnight) & theirs) || (pawn_attacks(~them, s) & b.pieces(kPawn) & theirs) ||
      (king_attacks(s) & b.pieces(kKing) & theirs))
    return true;
  const Bitboard queens = b.pieces(kQueen);
  Bitboard snipers = ((straight_lines(s) & (b.pieces(kRook) | queens)) |
                      (diagonal_lines(s) & (b.pieces(kBishop) | queens))) &
                     theirs;
  while (snipers)
    if (!(strictly_between(s, pop_lsb(snipers)) & occ)) return true;
  return false;
}

// Whether the side to move's king is safe once its piece of `type` has gone from `from` to
// `to`, taking the men on `captured` (the destination's, or the pawn taken en passant).
bool leaves_king_safe(const Board& b, PieceType type, Square from, Square to, Bitboard captured) {
  const Bitboard after = ((b.occupied() ^ bb(from)) & ~captured) | bb(to);
  return !attacked(b, type == kKing ? to : b.king_square(b.side), ~b.side, after, captured);
}

// The one legal move matching `san`, found from its destination square (the pieces of its
// type that reach it, each tested for leaving the king safe) without listing every legal
// move; a null Move when there is not exactly one, or a promotion lacks its piece (the
// caller then lists the legal moves to say what is wrong).
Move find_san_move(const Board& b, const SanMove& san) {
  const Color us = b.side, them = ~us;
  const Square to = san.to;
  const Bitboard ours = b.pieces(us), theirs = b.pieces(them), occ = ours | theirs;
  const Bitboard target = bb(to);
  if (ours & target) return Move();
  Bitboard from_set;
  bool slider = false;
  switch (san.type) {
    case kPawn: {
      if ((theirs & target) || to == b.ep) {
        from_set = pawn_attacks(them, to);
      } else {
        const Bitboard one = us == kWhite ? target >> 8 : target << 8;
        from_set = one;
        if (!(one & occ) && (target & (us == kWhite ? kRank4 : kRank5))) from_set |= us == kWhite ? one >> 8 : one << 8;
      }
      break;
    }
    case kKnight: from_set = knight_attacks(to); break;
    case kBishop: from_set = diagonal_lines(to), slider = true; break;
    case kRook: from_set = straight_lines(to), slider = true; break;
    case kQueen: from_set = straight_lines(to) | diagonal_lines(to), slider = true; break;
    default: from_set = king_attacks(to); break;
  }
  from_set &= b.pieces(us, san.type);
  if (san.from_file >= 0) from_set &= kFileA << san.from_file;
  if (san.from_rank >= 0) from_set &= kRank1 << (8 * san.from_rank);
  if (!from_set) return Move();

  const bool promotes = san.type == kPawn && (target & (kRank1 | kRank8));
  if (promotes != (san.promotion != kNoPieceType)) return Move();
  Move found;
  while (from_set) {
    const Square from = pop_lsb(from_set);
    if (slider && (strictly_between(to, from) & occ)) continue;  // the way is blocked
    Bitboard captured = theirs & target;
    Move m(from, to);
    if (promotes) {
      m = Move(from, to, kPromotion, san.promotion);
    } else if (san.type == kPawn && to == b.ep && file_of(from) != file_of(to)) {
      m = Move(from, to, kEnPassant);
      captured = bb(us == kWhite ? to - 8 : to + 8);
    }
    if (!leaves_king_safe(b, san.type, from, to, captured)) continue;
    if (!found.is_null()) return Move();  // ambiguous
    found = m;
  }
  return found;
}

// The legal move with wanted's from, to and promotion, castling aside, tested alone: the
// piece's reach, then the king's safety; a null Move when it is not legal
// (the caller's list then says why). The replays of stored games resolve every move here.
Move legal_from_to(const Board& b, Move wanted) {
  const Color us = b.side, them = ~us;
  const Square from = wanted.from(), to = wanted.to();
  const Piece moving = b.piece_on(from);
  if (moving == kNoPiece || color_of(moving) != us) return Move();
  const Bitboard ours = b.pieces(us), theirs = b.pieces(them), occ = ours | theirs;
  const Bitboard target = bb(to);
  if (ours & target) return Move();
  const PieceType type = type_of(moving);
  const bool promotes = type == kPawn && (target & (kRank1 | kRank8));
  if (promotes != (wanted.kind() == kPromotion)) return Move();
  Bitboard captured = theirs & target;
  Move m = promotes ? Move(from, to, kPromotion, wanted.promotion()) : Move(from, to);
  Bitboard reach;
  switch (type) {
    case kPawn:
      if (pawn_attacks(us, from) & target) {
        if (!captured) {
          if (to != b.ep) return Move();
          m = Move(from, to, kEnPassant);
          captured = bb(us == kWhite ? to - 8 : to + 8);
        }
        reach = target;
      } else {
        const Bitboard one = us == kWhite ? bb(from) << 8 : bb(from) >> 8;
        const Bitboard two = (one & ~occ & (us == kWhite ? kRank3 : kRank6)) ? (us == kWhite ? one << 8 : one >> 8) : 0;
        reach = (one | two) & ~occ;
      }
      break;
    case kKnight: reach = knight_attacks(from); break;
    // Sliders by their lines and strictly_between, not the slider attack tables: inside a
    // scan's replay their lookups missed the cache (a fifth of resolve_move's samples).
    case kBishop: reach = diagonal_lines(from); break;
    case kRook: reach = straight_lines(from); break;
    case kQueen: reach = straight_lines(from) | diagonal_lines(from); break;
    default: reach = king_attacks(from); break;
  }
  if (!(reach & target)) return Move();
  if (type >= kBishop && type <= kQueen && (strictly_between(from, to) & occ)) return Move();  // the way is blocked
  return leaves_king_safe(b, type, from, to, captured) ? m : Move();
}

// The side to move's castling move on that side when it is legal now, else a null Move:
// a few attack tests instead of listing every legal move (the list then says what is wrong).
Move legal_castling(const Board& b, bool king_side) {
  if (b.in_check()) return Move();
  const Bitboard occ = b.occupied();
  if (!(b.side == kWhite ? may_castle<kWhite>(b, king_side, occ) : may_castle<kBlack>(b, king_side, occ))) return Move();
  const Square k = b.side == kWhite ? 4 : 60;
  return Move(k, king_side ? k + 2 : k - 2, kCastling);
}

// What parse_san does, by listing the legal moves; also says why nothing matches.
Move resolve_san_by_list(const Board& b, const SanMove& san, std::string_view original) {
  auto illegal = [&](const std::string& why) -> IllegalMove {
    return IllegalMove("illegal move " + quoted(original) + " in " + to_fen(b) + ": " + why);
  };
  MoveList list;
  legal_moves(b, list);
  if (san.castling) {
    for (Move m : list)
      if (m.kind() == kCastling && (m.to() > m.from()) == san.king_side) return m;
    throw illegal("castling is not legal here");
  }
  Move found;
  int matches = 0;
  for (Move m : list) {
    if (m.to() != san.to || type_of(b.piece_on(m.from())) != san.type) continue;
    if (san.from_file >= 0 && file_of(m.from()) != san.from_file) continue;
    if (san.from_rank >= 0 && rank_of(m.from()) != san.from_rank) continue;
    if (m.kind() == kCastling) continue;
    if (m.kind() == kPromotion) {
      if (san.promotion == kNoPieceType) {
        throw illegal("a promotion needs its piece, e.g. " + to_san(b, m));
      }
      if (m.promotion() != san.promotion) continue;
    } else if (san.promotion != kNoPieceType) {
      continue;
    }
    found = m;
    ++matches;
  }
  if (matches == 1) return found;
  if (matches > 1) throw illegal("ambiguous; add the file or rank of the moving piece");
  throw illegal("no legal move matches");
}

}  // namespace

Move resolve_move(const Board& b, Move wanted) {
  // Most moves are tested alone (legal_from_to) instead of listing every legal move;
  // castling by its own squares (may_castle). Every failure goes through the list, which
  // also says what is wrong.
  const Piece moving = b.piece_on(wanted.from());
  const Square home = b.side == kWhite ? 4 : 60;
  if (moving != kNoPiece && color_of(moving) == b.side && type_of(moving) == kKing && wanted.from() == home &&
      (wanted.to() == home + 2 || wanted.to() == home - 2) && wanted.kind() != kPromotion) {
    if (const Move m = legal_castling(b, wanted.to() > home); !m.is_null()) return m;
  } else if (const Move m = legal_from_to(b, wanted); !m.is_null()) {
    return m;
  }
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

std::vector<Move> san_candidates(const Board& b, std::string_view text) {
  std::string_view stripped;
  const SanMove san = split_san(b, text, stripped);
  std::vector<Move> out;
  if (san.uci) {
    try {
      out.push_back(parse_uci(b, stripped));
    } catch (const IllegalMove&) {
    }
    return out;
  }
  MoveList list;
  legal_moves(b, list);
  for (Move m : list) {
    if (san.castling) {
      if (m.kind() == kCastling && (m.to() > m.from()) == san.king_side) out.push_back(m);
      continue;
    }
    if (m.to() != san.to || type_of(b.piece_on(m.from())) != san.type || m.kind() == kCastling) continue;
    if (san.from_file >= 0 && file_of(m.from()) != san.from_file) continue;
    if (san.from_rank >= 0 && rank_of(m.from()) != san.from_rank) continue;
    if ((m.kind() == kPromotion) != (san.promotion != kNoPieceType)) continue;
    if (m.kind() == kPromotion && m.promotion() != san.promotion) continue;
    out.push_back(m);
  }
  return out;
}

Move parse_san(const Board& b, std::string_view text) {
  SanMove san;
  if (!split_common_san(text, san)) {
    std::string_view stripped;
    san = split_san(b, text, stripped);
    if (san.uci) return parse_uci(b, stripped);
  }
  const Move m = san.castling ? legal_castling(b, san.king_side) : find_san_move(b, san);
  if (!m.is_null()) return m;
  return resolve_san_by_list(b, san, text);
}

namespace detail {

Move parse_san_by_list(const Board& b, std::string_view text) {
  std::string_view stripped;
  const SanMove san = split_san(b, text, stripped);
  if (san.uci) return parse_uci(b, stripped);
  return resolve_san_by_list(b, san, text);
}

}  // namespace detail

}  // namespace pgmate::chess
