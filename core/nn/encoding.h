// The network input: 72 planes of 8x8 floats, from the side to move's point of view.
//
// Layout: out[plane * 64 + sq], sq = rank * 8 + file in the side to move's frame: for White
// sq is the square itself (a1 = 0 ... h8 = 63); for Black the ranks are flipped (s ^ 56,
// files unchanged), so index 0..7 is always "our" first rank and our pawns move toward
// higher indices. Colours are swapped the same way: "us" is the side to move of history[0],
// "them" the other side. Every value lies in [0, 1].
//
// history[0] is the current position, history[1..3] the previous ones (most recent first);
// all of them are drawn in the frame and colours of history[0]'s side to move. count is
// clamped to 4; missing positions give zero planes; count < 1 gives all 72 planes zero.
//
// Planes ("P" = pawn, N B R Q K; "attack" = attacks_of with the full occupancy, so a
// piece "attacks" the square of a piece of its own colour it defends; pawns attack their
// two diagonals only, kings attack their 8 neighbours, castling is no attack):
//
//   plane  contents                                                          values
//   -----  ----------------------------------------------------------------  ---------
//    0- 5  history[0]: our P N B R Q K                                       0/1
//    6-11  history[0]: their P N B R Q K                                     0/1
//   12-23  history[1]: the same 12 planes (our 6, their 6)                   0/1
//   24-35  history[2]                                                        0/1
//   36-47  history[3]                                                        0/1
//   48     side to move: all ones when White is to move, all zeros for Black 0/1
//   49     fullmove number / 200, clipped to 1 (whole plane)                 [0,1]
//   50     castling right: ours king side (whole plane)                      0/1
//   51     castling right: ours queen side                                   0/1
//   52     castling right: theirs king side                                  0/1
//   53     castling right: theirs queen side                                 0/1
//   54     en-passant target square, one-hot (the board's ep field, which
//          is set only when the capture is possible -- the Polyglot rule)    0/1
//   55     halfmove clock / 100, clipped to 1 (whole plane)                  [0,1]
//   56     repetitions argument: 0 -> 0, 1 -> 0.5, 2 or more -> 1            0/.5/1
//   57     side to move in check (whole plane)                               0/1
//   58     squares we attack                                                 0/1
//   59     squares they attack                                               0/1
//   60     attack on their king zone: on each square of the 3x3 block
//          centred on their king (king square included, clipped at the
//          edge), the number of our pieces attacking it / 4, clipped;
//          our king counts as an attacker                                    [0,1]
//   61     defence of our king zone: the same on the 3x3 block around our
//          king, counting our pieces other than the king itself              [0,1]
//   62     our knight mobility: on each of our knights' squares, the number
//          of knight targets not occupied by our pieces / 8; 0 for a
//          pinned knight                                                     [0,1]
//   63     our bishop mobility: on each of our bishops' squares, the number
//          of attacked squares not occupied by our pieces / 13; a pinned
//          bishop counts only the squares along its pin line                 [0,1]
//   64     our passed pawns: no enemy pawn ahead of it on its own or an
//          adjacent file                                                     0/1
//   65     our isolated pawns: no pawn of ours on an adjacent file           0/1
//   66     weak squares: squares on ranks 3-6 (counted from our side) that
//          no pawn of ours can ever attack, i.e. not attacked by any of our
//          pawns from its current square or any square ahead of it on its
//          file (blocking, captures and the squares' occupants are ignored) 0/1
//   67     centre control: on d4, e4, d5, e5 only, the number of our pieces
//          attacking the square / 4, clipped; 0 elsewhere                    [0,1]
//   68     our pinned pieces (absolutely pinned to our king by an enemy
//          slider; the squares of the pinned pieces)                        0/1
//   69     our hanging pieces: our pieces other than the king attacked by
//          them and not attacked (defended) by us                            0/1
//   70     our pieces attacked by a lower-value piece of theirs (values P 1,
//          N 3, B 3, R 5, Q 9; our king is never marked): N/B attacked by a
//          pawn, R by P/N/B, Q by P/N/B/R                                    0/1
//   71     our trapped pieces: a knight, bishop, rook or queen that has at
//          least one destination (its attacked squares not occupied by our
//          pieces, along its pin line when pinned; check is ignored) but no
//          safe one, where a destination is safe when they do not attack it
//          (in the current occupancy) or it holds a piece of theirs worth at
//          least as much as the mover (an even or winning capture). Pieces
//          with no destination at all (blocked in, pinned knights) are not
//          marked.                                                           0/1
#pragma once

#include <vector>

#include "chess/board.h"

namespace pgmate::nn {

constexpr int kInputPlanes = 72;
constexpr int kPlaneSize = 64;
constexpr int kInputSize = kInputPlanes * kPlaneSize;  // floats per position
constexpr int kHistoryPositions = 4;
constexpr int kPlanesPerPosition = 12;

// Plane indices (see the table above).
enum Plane : int {
  kPlaneOurPieces = 0,     // + piece type (P N B R Q K), + 12 per history step
  kPlaneTheirPieces = 6,   // + piece type, + 12 per history step
  kPlaneSideToMove = 48,
  kPlaneFullmove = 49,
  kPlaneCastlingOursOO = 50,
  kPlaneCastlingOursOOO = 51,
  kPlaneCastlingTheirsOO = 52,
  kPlaneCastlingTheirsOOO = 53,
  kPlaneEnPassant = 54,
  kPlaneHalfmove = 55,
  kPlaneRepetitions = 56,
  kPlaneInCheck = 57,
  kPlaneOurAttacks = 58,
  kPlaneTheirAttacks = 59,
  kPlaneTheirKingZoneAttack = 60,
  kPlaneOurKingZoneDefence = 61,
  kPlaneKnightMobility = 62,
  kPlaneBishopMobility = 63,
  kPlanePassedPawns = 64,
  kPlaneIsolatedPawns = 65,
  kPlaneWeakSquares = 66,
  kPlaneCentreControl = 67,
  kPlanePinned = 68,
  kPlaneHanging = 69,
  kPlaneAttackedByLower = 70,
  kPlaneTrapped = 71,
};

// Writes the kInputSize floats of one position (with up to 3 earlier ones) to out.
void encode(const chess::Board* history, int count, float* out, int repetitions = 0);

// Encodes histories.size() positions to out[k * kInputSize ...]. histories[k][0] is the
// current position and histories[k][1..3] its predecessors (entries beyond the fourth are
// only used for repetitions). The repetitions argument is derived from the vector: the
// number of entries histories[k][2], [4], ... equal to histories[k][0] (pieces, side,
// castling rights and en-passant square; the Zobrist key is not trusted, as boards played
// with play<false> do not keep it). An empty vector gives zero planes.
void encode_batch(const std::vector<std::vector<chess::Board>>& histories, float* out);

}  // namespace pgmate::nn
