// A 64-byte position for bulk perft (the GPU stores millions of them per level): colour
// and type bitboards (the king set is derived) plus side, castling rights and en-passant
// square. No mailbox, key or clocks, so copying a child is eight 64-bit stores.
// Move generation is movegen.h's generate_legal (templated on the position type); play()
// derives the moving and captured pieces from the bitboards.
// Host and device share this file, so its perft can be checked against chess::perft on the host.
#pragma once

#include "chess/board.h"
#include "chess/movegen.h"

namespace pgmate::chess {

// `A` is the slider lookup policy (bitboard.h's DefaultAttacks, or tables on the device).
template <class A>
struct BasicCompactBoard {
  using Attacks = A;

  Bitboard colors[2];
  Bitboard types[5];  // pawn .. queen; kings are the occupied squares in none of these
  std::uint8_t side;
  std::uint8_t castling;
  std::uint8_t ep;  // kNoSquare when none (same rule as Board::ep)
  std::uint8_t pad[5];

  PGMATE_HD Bitboard occupied() const { return colors[0] | colors[1]; }
  PGMATE_HD Bitboard pieces(Color c) const { return colors[c]; }
  PGMATE_HD Bitboard pieces(PieceType t) const {
    if (t == kKing) return occupied() & ~(types[0] | types[1] | types[2] | types[3] | types[4]);
    return types[t];
  }
  PGMATE_HD Bitboard pieces(Color c, PieceType t) const { return colors[c] & pieces(t); }

  PGMATE_HD Bitboard attackers_to(Square s, Color by, Bitboard occ) const {
    const Bitboard kings = pieces(kKing);
    return ((pawn_attacks(~by, s) & types[kPawn]) | (knight_attacks(s) & types[kKnight]) | (king_attacks(s) & kings) |
            (A::rook(s, occ) & (types[kRook] | types[kQueen])) |
            (A::bishop(s, occ) & (types[kBishop] | types[kQueen]))) &
           colors[by];
  }

  PGMATE_HD static BasicCompactBoard from(const Board& b) {
    BasicCompactBoard c{};
    c.colors[0] = b.by_color[0];
    c.colors[1] = b.by_color[1];
    for (int t = 0; t < 5; ++t) c.types[t] = b.by_type[t];
    c.side = std::uint8_t(b.side);
    c.castling = b.castling;
    c.ep = b.ep;
    return c;
  }

  // The same position under another lookup policy (field copies; the layout is the same).
  template <class Other>
  PGMATE_HD static BasicCompactBoard rebind(const Other& o) {
    BasicCompactBoard c;
    c.colors[0] = o.colors[0];
    c.colors[1] = o.colors[1];
    for (int t = 0; t < 5; ++t) c.types[t] = o.types[t];
    c.side = o.side;
    c.castling = o.castling;
    c.ep = o.ep;
    for (int i = 0; i < 5; ++i) c.pad[i] = 0;
    return c;
  }

  // Plays a legal move (as generated for this position). Written without run-time array
  // indices (colour and type are selected, loops unrolled), so on the device the board
  // stays in registers instead of local memory.
  PGMATE_HD void play(Move m) {
    const bool black = side != kWhite;
    const Square from = m.from(), to = m.to();
    const Bitboard from_bb = bb(from), to_bb = bb(to);
    Bitboard ours = black ? colors[1] : colors[0];
    Bitboard theirs = black ? colors[0] : colors[1];
    // The moving piece's type: the one set holding `from`, else the king.
    int moving = kKing;
PGMATE_UNROLL
    for (int t = kQueen; t >= kPawn; --t)
      if (types[t] & from_bb) moving = t;
    ep = kNoSquare;
    if (m.kind() == kCastling) {
      const bool king_side = to > from;
      const Bitboard rook_move = king_side ? (bb(from + 3) | bb(from + 1)) : (bb(from - 4) | bb(from - 1));
      ours ^= from_bb | to_bb | rook_move;
      types[kRook] ^= rook_move;
    } else {
      const Square captured_square = m.kind() == kEnPassant ? (black ? to + 8 : to - 8) : to;
      const Bitboard cleared = from_bb | bb(captured_square);
      theirs &= ~bb(captured_square);
      ours ^= from_bb | to_bb;
      const int placed = m.kind() == kPromotion ? int(m.promotion()) : moving;
PGMATE_UNROLL
      for (int t = 0; t < 5; ++t) types[t] = (types[t] & ~cleared) | (t == placed ? to_bb : 0);
      if (moving == kPawn && (from ^ to) == 16) {
        const Bitboard beside = (shift_east(to_bb) | shift_west(to_bb)) & theirs & types[kPawn];
        if (beside) ep = std::uint8_t((from + to) / 2);
      }
    }
    colors[0] = black ? theirs : ours;
    colors[1] = black ? ours : theirs;
    if ((from_bb | to_bb) & kCastlingSquares)
      castling &= ~(castling_rights_touching(from) | castling_rights_touching(to));
    side = std::uint8_t(black ? kWhite : kBlack);
  }
};

using CompactBoard = BasicCompactBoard<DefaultAttacks>;
static_assert(sizeof(CompactBoard) == 64, "CompactBoard must stay 64 bytes (device levels are sized by it)");

template <class A>
PGMATE_HD inline int count_legal_moves(const BasicCompactBoard<A>& b) {
  MoveCountSink sink;
  generate_legal(b, sink);
  return int(sink.count);
}

template <class A>
PGMATE_HD inline void legal_moves(const BasicCompactBoard<A>& b, MoveList& list) {
  MoveListSink sink{list};
  generate_legal(b, sink);
  sink.finish();
}

// perft(b, 2): every move played and its replies counted (the GPU's fused last two plies).
template <class A>
PGMATE_HD inline std::uint64_t perft_two_plies(const BasicCompactBoard<A>& b) {
  MoveList list;
  legal_moves(b, list);
  std::uint64_t nodes = 0;
  for (int i = 0; i < list.size; ++i) {
    BasicCompactBoard<A> child = b;
    child.play(list.moves[i]);
    nodes += std::uint64_t(count_legal_moves(child));
  }
  return nodes;
}

// Depth-first perft without recursion: one board and one move list per ply in fixed
// arrays, so the frame is static (no dependence on a device stack limit). depth must be
// at most kMaxDepth. `stop()` is asked once per node `kStopCheckHeight` or more plies above
// the leaves; when it answers true the count so far is returned (the caller discards it).
template <int kMaxDepth, class A, class Stop>
PGMATE_HD inline std::uint64_t perft_iterative(const BasicCompactBoard<A>& root, int depth, Stop&& stop) {
  static_assert(kMaxDepth >= 2, "kMaxDepth counts the plies including the bulk-counted last one");
  constexpr int kStopCheckHeight = 3;
  if (depth <= 0) return 1;
  if (depth == 1) return std::uint64_t(count_legal_moves(root));
  BasicCompactBoard<A> boards[kMaxDepth - 1];
  MoveList lists[kMaxDepth - 1];
  int next[kMaxDepth - 1];
  boards[0] = root;
  legal_moves(boards[0], lists[0]);
  next[0] = 0;
  int ply = 0;
  std::uint64_t nodes = 0;
  while (true) {
    if (next[ply] == lists[ply].size) {
      if (ply == 0) break;
      --ply;
      continue;
    }
    BasicCompactBoard<A> child = boards[ply];
    child.play(lists[ply].moves[next[ply]++]);
    const int child_depth = depth - ply - 1;  // plies still to count below the child
    if (child_depth == 1) {
      nodes += std::uint64_t(count_legal_moves(child));
      continue;
    }
    if (child_depth >= kStopCheckHeight && stop()) return nodes;
    ++ply;
    boards[ply] = child;
    legal_moves(child, lists[ply]);
    next[ply] = 0;
  }
  return nodes;
}

}  // namespace pgmate::chess
