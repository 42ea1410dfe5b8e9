// The AlphaZero policy layout: 4672 slots = 64 from-squares x 73 move types.
//
// Every slot is seen from the side to move: for Black the board is flipped vertically
// (square s -> s ^ 56, files unchanged), so Black's moves are encoded as if White moved up
// the board. e2e4 (White) and e7e5 (Black) therefore share a slot.
//
//   slot = from * 73 + type, with `from` the (flipped) from-square, a1 = 0 ... h8 = 63.
//
//   type  0..55  queen-like moves: type = dir * 7 + (distance - 1), distance 1..7, with
//                dir 0 N (0,+1), 1 NE (+1,+1), 2 E (+1,0), 3 SE (+1,-1),
//                    4 S (0,-1), 5 SW (-1,-1), 6 W (-1,0), 7 NW (-1,+1)
//                as (file step, rank step) in the flipped frame. Used by every move of a
//                king, queen, rook, bishop and pawn, including promotion to a queen and
//                castling (the king's two-square move, e1g1 = E distance 2, e1c1 = W 2).
//   type 56..63  knight moves, clockwise from north-north-east, (file step, rank step):
//                56 (+1,+2), 57 (+2,+1), 58 (+2,-1), 59 (+1,-2),
//                60 (-1,-2), 61 (-2,-1), 62 (-2,+1), 63 (-1,+2).
//   type 64..72  under-promotions: type = 64 + dir * 3 + piece, with
//                dir   0 capture left (toward file a, file step -1), 1 straight, 2 capture
//                      right (toward file h, file step +1) -- "left" in the flipped frame,
//                      where files are unchanged, so it is toward file a for both colours;
//                piece 0 knight, 1 bishop, 2 rook.
//
// Geometry counts (checked by tests/nn/policy_test.cpp):
//   * slot_is_valid_geometry(): the slot's target square is on the board. 2254 of the 4672
//     slots: 1456 queen-like + 336 knight + 462 under-promotion (from any from-square of
//     ranks 1-7: 56 straight + 49 left + 49 right = 154 target squares x 3 pieces).
//   * slot_is_reachable(): some legal move of some position uses the slot. Under-promotions
//     are only possible from the 7th rank, leaving 8 + 7 + 7 = 22 x 3 = 66 of them, so
//     1456 + 336 + 66 = 1858 slots -- the well-known count of distinct UCI moves (the
//     1792 queen-like and knight from-to pairs plus 22 promotion pairs x 3 extra pieces).
#pragma once

#include "chess/board.h"

namespace pgmate::nn {

constexpr int kPolicySize = 4672;
constexpr int kMoveTypes = 73;
constexpr int kQueenLikeTypes = 56;
constexpr int kKnightTypeBase = 56;
constexpr int kUnderPromotionTypeBase = 64;

// Number of slots with slot_is_valid_geometry() / slot_is_reachable() true.
constexpr int kGeometricSlots = 2254;
constexpr int kReachableSlots = 1858;

// The slot of move m played by `side_to_move`, in 0..4671; -1 when the from-to pair is
// neither a queen-like nor a knight move (no legal move is). Promotion to a queen and
// moves with kind kNormal that reach the last rank share the queen-like slot.
int policy_slot(chess::Move m, chess::Color side_to_move);

// The slots of a list of moves (e.g. from chess::legal_moves), written to slots[0..size).
void policy_slots(const chess::MoveList& moves, chess::Color side_to_move, int* slots);

// The legal move of b in that slot (kind filled from the board: castling, en passant,
// promotion), or a null Move() when the slot is out of range or holds no legal move.
// A queen-like slot taken by a pawn reaching the last rank gives the queen promotion.
chess::Move policy_move(int slot, const chess::Board& b);

// The slot's target square is on the board (see the counts above).
bool slot_is_valid_geometry(int slot);

// Some legal move of some position can use the slot: valid geometry, and for the
// under-promotion types the from-square is on the 7th rank (flipped frame).
bool slot_is_reachable(int slot);

// The (flipped-frame) target square of a slot, or -1 when it leaves the board.
int slot_target(int slot);

}  // namespace pgmate::nn
