// UCI and SAN move notation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::chess {

// "e2e4", "e7e8q", "e1g1" (castling as the king's move).
std::string to_uci(Move m);

// Parses UCI text and returns the matching legal move of `b`; throws ParseError naming
// the text when it is malformed, IllegalMove (a ParseError) when it is not legal here.
Move parse_uci(const Board& b, std::string_view text);

// Syntax-only UCI parse (no board): from, to and promotion piece. The kind is kNormal or
// kPromotion; use parse_uci with a board to get castling and en passant right.
Move parse_uci_syntax(std::string_view text);

// Standard Algebraic Notation with minimal disambiguation and '+'/'#'.
std::string to_san(const Board& b, Move m);

// Parses SAN for `b`. Tolerates common variants: 0-0 / 0-0-0, missing or extra '+'/'#',
// annotations (!, ?), "e8Q" and "e8=Q", a leading 'P', an en-passant mark ("e.p.", "e.p",
// "ep"), long algebraic with '-', 'x' or ':' between the squares ("Ng1-f3", "e2xe4",
// "e7-e8=Q"; the piece letter may be left out: "g1-f3" is the piece on g1, "e1-g1" the
// king castling). Falls back to UCI text ("g1f3", "e7e8q").
// Throws ParseError for text that is not a move, IllegalMove for a move that names no
// single legal move of `b` (not legal, or ambiguous).
Move parse_san(const Board& b, std::string_view text);

// Every legal move of `b` that SAN `text` could mean, ignoring that it must name only one:
// the readings of an ambiguous move ("Nd2" when both knights reach d2). Empty when none
// matches; throws ParseError for text that is not a move.
std::vector<Move> san_candidates(const Board& b, std::string_view text);

namespace detail {
// parse_san by listing every legal move of `b` (parse_san itself looks only at the pieces
// that reach the destination square): the reference its tests compare against.
Move parse_san_by_list(const Board& b, std::string_view text);
}  // namespace detail

// The legal move of b with m's from, to and promotion piece (the kind is recognised
// from the board: castling, en passant). Throws IllegalMove when there is none.
Move resolve_move(const Board& b, Move m);

namespace detail {
// play_checked's rare case, a counter at its limit: throws IllegalMove when m would pass it.
void check_counters(const Board& b, Move m);
}  // namespace detail

// Plays m, a legal move of b, as Board::play does, but throws IllegalMove naming the move
// and the position instead of letting a counter stop at 65535 (the most the board and its
// packed form hold), which would repeat a fullmove number or freeze the halfmove clock.
// Board::play stops them silently for perft and the search, whose boards nobody reads;
// every board given back to a user or stored is played through here. With kKeys false the
// board's Zobrist key is left stale, for replays that never read it (the PGN reader, the
// material and pattern scans).
template <bool kKeys = true>
inline void play_checked(Board& b, Move m) {
  // Inline, and each counter read alone: a replay calls this for every move, and one wide
  // read of the fields play() has just stored one by one waits for those stores.
  if (b.halfmove == 0xFFFF || b.fullmove == 0xFFFF) [[unlikely]]
    detail::check_counters(b, m);
  b.play<kKeys>(m);
}

// Drops the kind bits a board is needed to know (castling, en passant), keeping from,
// to and the promotion: the board-free identity of a move, as stored by SQL.
PGMATE_HD constexpr Move board_free(Move m) {
  return m.kind() == kPromotion ? m : Move(m.from(), m.to());
}

// True when m is one of b's legal moves.
bool is_legal(const Board& b, Move m);

}  // namespace pgmate::chess
