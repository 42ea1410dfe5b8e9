// The 64 x 73 AlphaZero policy layout (see policy.h).
#include "nn/policy.h"

#include "chess/movegen.h"

namespace pgmate::nn {

using namespace pgmate::chess;

namespace {

// (file step, rank step) of the 8 queen directions and the 8 knight jumps, in slot order.
constexpr int kQueenDir[8][2] = {{0, 1}, {1, 1}, {1, 0}, {1, -1}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}};
constexpr int kKnightJump[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};

constexpr int sign(int x) { return (x > 0) - (x < 0); }
constexpr int abs_int(int x) { return x < 0 ? -x : x; }

// Direction index of a unit step, or -1.
constexpr int queen_dir_index(int dx, int dy) {
  for (int d = 0; d < 8; ++d)
    if (kQueenDir[d][0] == dx && kQueenDir[d][1] == dy) return d;
  return -1;
}

// The (flipped-frame) move type of a from-to pair with an optional under-promotion piece,
// or -1.
int move_type(int dx, int dy, PieceType under_promotion) {
  if (under_promotion != kNoPieceType) {
    if (dy != 1 || dx < -1 || dx > 1) return -1;
    return kUnderPromotionTypeBase + (dx + 1) * 3 + (under_promotion - kKnight);
  }
  const int ax = abs_int(dx), ay = abs_int(dy);
  if ((ax == 1 && ay == 2) || (ax == 2 && ay == 1)) {
    for (int k = 0; k < 8; ++k)
      if (kKnightJump[k][0] == dx && kKnightJump[k][1] == dy) return kKnightTypeBase + k;
  }
  if ((ax == ay || ax == 0 || ay == 0) && (ax | ay) != 0) {
    const int dist = ax > ay ? ax : ay;
    return queen_dir_index(sign(dx), sign(dy)) * 7 + dist - 1;
  }
  return -1;
}

// (file step, rank step) of a move type.
void type_step(int type, int& dx, int& dy) {
  if (type < kQueenLikeTypes) {
    const int dir = type / 7, dist = type % 7 + 1;
    dx = kQueenDir[dir][0] * dist;
    dy = kQueenDir[dir][1] * dist;
  } else if (type < kUnderPromotionTypeBase) {
    dx = kKnightJump[type - kKnightTypeBase][0];
    dy = kKnightJump[type - kKnightTypeBase][1];
  } else {
    dx = (type - kUnderPromotionTypeBase) / 3 - 1;
    dy = 1;
  }
}

}  // namespace

int policy_slot(Move m, Color side_to_move) {
  const int flip = side_to_move == kWhite ? 0 : 56;
  const Square from = m.from() ^ flip, to = m.to() ^ flip;
  const int dx = file_of(to) - file_of(from), dy = rank_of(to) - rank_of(from);
  const PieceType under =
      m.kind() == kPromotion && m.promotion() != kQueen ? m.promotion() : kNoPieceType;
  const int type = move_type(dx, dy, under);
  return type < 0 ? -1 : from * kMoveTypes + type;
}

void policy_slots(const MoveList& moves, Color side_to_move, int* slots) {
  for (int i = 0; i < moves.size; ++i) slots[i] = policy_slot(moves.moves[i], side_to_move);
}

int slot_target(int slot) {
  if (slot < 0 || slot >= kPolicySize) return -1;
  const int from = slot / kMoveTypes, type = slot % kMoveTypes;
  int dx, dy;
  type_step(type, dx, dy);
  const int f = file_of(from) + dx, r = rank_of(from) + dy;
  if (f < 0 || f > 7 || r < 0 || r > 7) return -1;
  return make_square(f, r);
}

bool slot_is_valid_geometry(int slot) { return slot_target(slot) >= 0; }

bool slot_is_reachable(int slot) {
  if (!slot_is_valid_geometry(slot)) return false;
  if (slot % kMoveTypes >= kUnderPromotionTypeBase) return rank_of(slot / kMoveTypes) == 6;
  return true;
}

Move policy_move(int slot, const Board& b) {
  const int to_flipped = slot_target(slot);
  if (to_flipped < 0) return Move();
  const int flip = b.side == kWhite ? 0 : 56;
  const Square from = (slot / kMoveTypes) ^ flip, to = to_flipped ^ flip;
  const Piece moving = b.piece_on(from);
  if (moving == kNoPiece || color_of(moving) != b.side) return Move();

  const int type = slot % kMoveTypes;
  PieceType promotion = kNoPieceType;
  if (type >= kUnderPromotionTypeBase) {
    promotion = PieceType(kKnight + (type - kUnderPromotionTypeBase) % 3);
  } else if (type_of(moving) == kPawn && (to_flipped >> 3) == 7) {
    promotion = kQueen;
  }

  MoveList list;
  legal_moves(b, list);
  for (Move m : list) {
    if (m.from() != from || m.to() != to) continue;
    if (m.kind() == kPromotion ? m.promotion() == promotion : promotion == kNoPieceType) return m;
  }
  return Move();
}

}  // namespace pgmate::nn
