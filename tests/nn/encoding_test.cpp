// The 72-plane input encoding: hand-checked planes, the colour flip, history, the feature
// planes on small positions, value ranges on the perft suite.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "nn/encoding.h"

namespace pgmate::nn {
namespace {

using namespace pgmate::chess;

using Planes = std::vector<float>;

Planes encode_boards(const std::vector<Board>& history, int repetitions = 0) {
  Planes out(kInputSize, -1.0f);  // encode must overwrite everything
  encode(history.data(), int(history.size()), out.data(), repetitions);
  return out;
}
Planes encode_fen(std::string_view fen) { return encode_boards({parse_fen(fen)}); }

// The 64 values of one plane as a bitboard of non-zero squares (frame of the encoding).
Bitboard nonzero(const Planes& p, int plane) {
  Bitboard b = 0;
  for (int s = 0; s < 64; ++s)
    if (p[plane * 64 + s] != 0.0f) b |= bb(s);
  return b;
}
float at(const Planes& p, int plane, std::string_view square) {
  return p[plane * 64 + parse_square(square)];
}
bool plane_all(const Planes& p, int plane, float v) {
  for (int s = 0; s < 64; ++s)
    if (p[plane * 64 + s] != v) return false;
  return true;
}

Bitboard squares(std::initializer_list<std::string_view> names) {
  Bitboard b = 0;
  for (auto n : names) b |= bb(parse_square(n));
  return b;
}

// Play UCI moves from the start; returns the positions most recent first.
std::vector<Board> history_after(std::initializer_list<std::string_view> moves) {
  std::vector<Board> seq{parse_fen(kStartFen)};
  for (auto m : moves) {
    Board b = seq.back();
    b.play(parse_uci(b, m));
    seq.push_back(b);
  }
  return {seq.rbegin(), seq.rend()};
}

// Ranks mirrored, colours swapped, the other side to move.
Board mirror(const Board& b) {
  Board m;
  m.clear();
  for (Square s = 0; s < 64; ++s)
    if (b.piece_on(s) != kNoPiece)
      m.put(make_piece(~color_of(b.piece_on(s)), type_of(b.piece_on(s))), s ^ 56);
  m.side = ~b.side;
  m.castling = std::uint8_t(((b.castling & 3) << 2) | ((b.castling >> 2) & 3));
  m.ep = b.ep == kNoSquare ? kNoSquare : std::uint8_t(b.ep ^ 56);
  m.halfmove = b.halfmove;
  m.fullmove = b.fullmove;
  m.key = m.compute_key();
  return m;
}

std::vector<Board> perft_suite_positions() {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  std::vector<Board> boards;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) boards.push_back(parse_fen(line.substr(0, line.find(';'))));
  return boards;
}

TEST(Encoding, StartPositionPieces) {
  const Planes p = encode_fen(kStartFen);
  EXPECT_EQ(nonzero(p, 0), kRank2);                          // our pawns
  EXPECT_EQ(nonzero(p, 1), squares({"b1", "g1"}));           // our knights
  EXPECT_EQ(nonzero(p, 2), squares({"c1", "f1"}));
  EXPECT_EQ(nonzero(p, 3), squares({"a1", "h1"}));
  EXPECT_EQ(nonzero(p, 4), squares({"d1"}));
  EXPECT_EQ(nonzero(p, 5), squares({"e1"}));
  EXPECT_EQ(nonzero(p, 6), kRank7);                          // their pawns
  EXPECT_EQ(nonzero(p, 10), squares({"d8"}));
  EXPECT_EQ(nonzero(p, 11), squares({"e8"}));
  for (int plane = 0; plane < 12; ++plane)
    for (int s = 0; s < 64; ++s) EXPECT_TRUE(p[plane * 64 + s] == 0.0f || p[plane * 64 + s] == 1.0f);
  for (int plane = 12; plane < 48; ++plane) EXPECT_TRUE(plane_all(p, plane, 0.0f)) << plane;  // no history
  EXPECT_TRUE(plane_all(p, kPlaneSideToMove, 1.0f));
  EXPECT_TRUE(plane_all(p, kPlaneFullmove, 1.0f / 200.0f));
  for (int plane = kPlaneCastlingOursOO; plane <= kPlaneCastlingTheirsOOO; ++plane)
    EXPECT_TRUE(plane_all(p, plane, 1.0f)) << plane;
  EXPECT_TRUE(plane_all(p, kPlaneEnPassant, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneHalfmove, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneRepetitions, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneInCheck, 0.0f));
  EXPECT_EQ(nonzero(p, kPlaneOurAttacks), (kRank3 | kRank2 | kRank1) & ~squares({"a1", "h1"}));
  EXPECT_EQ(nonzero(p, kPlaneTheirAttacks), (kRank6 | kRank7 | kRank8) & ~squares({"a8", "h8"}));
  // Knights b1/g1: two free targets each; bishops boxed in.
  EXPECT_EQ(at(p, kPlaneKnightMobility, "b1"), 0.25f);
  EXPECT_EQ(nonzero(p, kPlaneKnightMobility), squares({"b1", "g1"}));
  EXPECT_TRUE(plane_all(p, kPlaneBishopMobility, 0.0f));
  // Our king zone: d2 and e2 each seen by three pieces (Q+B+N), e1 by the queen, f2 by none
  // but the king (which does not count).
  EXPECT_EQ(at(p, kPlaneOurKingZoneDefence, "d2"), 0.75f);
  EXPECT_EQ(at(p, kPlaneOurKingZoneDefence, "e2"), 0.75f);
  EXPECT_EQ(at(p, kPlaneOurKingZoneDefence, "e1"), 0.25f);
  EXPECT_EQ(at(p, kPlaneOurKingZoneDefence, "f2"), 0.0f);
  EXPECT_TRUE(plane_all(p, kPlaneTheirKingZoneAttack, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneCentreControl, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlanePassedPawns, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneIsolatedPawns, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneWeakSquares, 0.0f));
  for (int plane = kPlanePinned; plane <= kPlaneTrapped; ++plane) EXPECT_TRUE(plane_all(p, plane, 0.0f)) << plane;
}

TEST(Encoding, BlackToMoveIsFlipped) {
  const std::vector<Board> h = history_after({"e2e4"});
  const Planes p = encode_boards(h);
  // Our pawns are Black's, still all at home: the "second rank" of the flipped board.
  EXPECT_EQ(nonzero(p, 0), kRank2);
  EXPECT_EQ(nonzero(p, 5), squares({"e1"}));  // Black's king e8 drawn on e1
  EXPECT_EQ(nonzero(p, 4), squares({"d1"}));
  // Their pawns: White's, with e4 drawn on e5 of the flipped board.
  EXPECT_EQ(nonzero(p, 6), (kRank7 & ~squares({"e7"})) | squares({"e5"}));
  EXPECT_EQ(nonzero(p, 11), squares({"e8"}));
  EXPECT_TRUE(plane_all(p, kPlaneSideToMove, 0.0f));
  EXPECT_TRUE(plane_all(p, kPlaneFullmove, 1.0f / 200.0f));
  // History: the start position, seen from Black (our = Black), in planes 12-23.
  EXPECT_EQ(nonzero(p, 12), kRank2);
  EXPECT_EQ(nonzero(p, 18), kRank7);
  EXPECT_EQ(nonzero(p, 17), squares({"e1"}));
  EXPECT_EQ(nonzero(p, 23), squares({"e8"}));
  for (int plane = 24; plane < 48; ++plane) EXPECT_TRUE(plane_all(p, plane, 0.0f)) << plane;
}

TEST(Encoding, HistoryPlanes) {
  // 1.e4 e5 2.Nf3: White to move after ...Nc6 gives three predecessors.
  const std::vector<Board> h = history_after({"e2e4", "e7e5", "g1f3", "b8c6"});
  const Planes p = encode_boards({h[0], h[1], h[2], h[3]});
  EXPECT_EQ(nonzero(p, 0 + 1), squares({"b1", "f3"}));        // now: Nf3
  EXPECT_EQ(nonzero(p, 6 + 1), squares({"c6", "g8"}));        // now: ...Nc6 played
  EXPECT_EQ(nonzero(p, 12 + 7), squares({"b8", "g8"}));       // 1 back: before ...Nc6
  EXPECT_EQ(nonzero(p, 12 + 1), squares({"b1", "f3"}));
  EXPECT_EQ(nonzero(p, 24 + 1), squares({"b1", "g1"}));       // 2 back: before Nf3
  EXPECT_EQ(nonzero(p, 24 + 6), (kRank7 & ~squares({"e7"})) | squares({"e5"}));
  EXPECT_EQ(nonzero(p, 36 + 6), kRank7);                      // 3 back: before ...e5
  EXPECT_EQ(nonzero(p, 36 + 0), (kRank2 & ~squares({"e2"})) | squares({"e4"}));
  // Fewer positions: the rest stays zero.
  const Planes q = encode_boards({h[0], h[1]});
  for (int plane = 24; plane < 48; ++plane) EXPECT_TRUE(plane_all(q, plane, 0.0f)) << plane;
  for (int i = 0; i < 24 * 64; ++i) EXPECT_EQ(p[i], q[i]) << i;
  // More than four positions: only four are drawn.
  const Planes r = encode_boards(h);
  EXPECT_EQ(r, p);
}

TEST(Encoding, EnPassantOneHot) {
  const std::vector<Board> h = history_after({"e2e4", "d7d5", "e4e5", "f7f5"});
  ASSERT_EQ(h[0].ep, parse_square("f6"));
  const Planes p = encode_boards(h);
  EXPECT_EQ(nonzero(p, kPlaneEnPassant), squares({"f6"}));
  EXPECT_EQ(at(p, kPlaneEnPassant, "f6"), 1.0f);
  // Black's en passant, flipped: White's d2-d4 next to a black pawn on e4 gives d3 -> d6.
  const Planes q = encode_fen("4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1");
  EXPECT_EQ(nonzero(q, kPlaneEnPassant), squares({"d6"}));
}

TEST(Encoding, CastlingPlanesAndClocks) {
  const Planes w = encode_fen("r3k2r/8/8/8/8/8/8/R3K2R w Kq - 37 90");
  EXPECT_TRUE(plane_all(w, kPlaneCastlingOursOO, 1.0f));
  EXPECT_TRUE(plane_all(w, kPlaneCastlingOursOOO, 0.0f));
  EXPECT_TRUE(plane_all(w, kPlaneCastlingTheirsOO, 0.0f));
  EXPECT_TRUE(plane_all(w, kPlaneCastlingTheirsOOO, 1.0f));
  EXPECT_TRUE(plane_all(w, kPlaneHalfmove, 0.37f));
  EXPECT_TRUE(plane_all(w, kPlaneFullmove, 90.0f / 200.0f));
  const Planes b = encode_fen("r3k2r/8/8/8/8/8/8/R3K2R b Kq - 150 400");
  EXPECT_TRUE(plane_all(b, kPlaneCastlingOursOO, 0.0f));
  EXPECT_TRUE(plane_all(b, kPlaneCastlingOursOOO, 1.0f));  // Black's q
  EXPECT_TRUE(plane_all(b, kPlaneCastlingTheirsOO, 1.0f));  // White's K
  EXPECT_TRUE(plane_all(b, kPlaneCastlingTheirsOOO, 0.0f));
  EXPECT_TRUE(plane_all(b, kPlaneHalfmove, 1.0f));  // clipped
  EXPECT_TRUE(plane_all(b, kPlaneFullmove, 1.0f));  // clipped
}

TEST(Encoding, Repetitions) {
  const Board start = parse_fen(kStartFen);
  EXPECT_TRUE(plane_all(encode_boards({start}, 0), kPlaneRepetitions, 0.0f));
  EXPECT_TRUE(plane_all(encode_boards({start}, 1), kPlaneRepetitions, 0.5f));
  EXPECT_TRUE(plane_all(encode_boards({start}, 2), kPlaneRepetitions, 1.0f));
  EXPECT_TRUE(plane_all(encode_boards({start}, 5), kPlaneRepetitions, 1.0f));
  // encode_batch counts them from the history vector.
  const std::vector<Board> once = history_after({"g1f3", "g8f6", "f3g1", "f6g8"});
  const std::vector<Board> twice =
      history_after({"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"});
  const std::vector<Board> none = history_after({"g1f3", "g8f6"});
  std::vector<float> out(4 * kInputSize, -1.0f);
  encode_batch({once, twice, none, {}}, out.data());
  EXPECT_EQ(out[0 * kInputSize + kPlaneRepetitions * 64], 0.5f);
  EXPECT_EQ(out[1 * kInputSize + kPlaneRepetitions * 64], 1.0f);
  EXPECT_EQ(out[2 * kInputSize + kPlaneRepetitions * 64], 0.0f);
  for (int i = 0; i < kInputSize; ++i) EXPECT_EQ(out[3 * kInputSize + i], 0.0f);
  // And otherwise equals encode on the first four positions.
  const Planes single = encode_boards({once[0], once[1], once[2], once[3]}, 1);
  for (int i = 0; i < kInputSize; ++i) EXPECT_EQ(out[i], single[i]) << i;
}

TEST(Encoding, InCheck) {
  EXPECT_TRUE(plane_all(encode_fen("4k3/8/8/8/8/8/8/4K2r w - - 0 1"), kPlaneInCheck, 1.0f));
  EXPECT_TRUE(plane_all(encode_fen("4k3/8/8/8/8/8/8/4K3 b - - 0 1"), kPlaneInCheck, 0.0f));
  EXPECT_TRUE(plane_all(encode_fen("4k3/8/8/1B6/8/8/8/4K3 b - - 0 1"), kPlaneInCheck, 1.0f));
}

TEST(Encoding, MirroredTwinsEncodeIdentically) {
  std::size_t compared = 0;
  for (const Board& root : perft_suite_positions()) {
    MoveList list;
    legal_moves(root, list);
    // The root, and each child with the root as its history.
    std::vector<std::vector<Board>> cases{{root}};
    for (Move m : list) {
      Board child = root;
      child.play(m);
      cases.push_back({child, root});
    }
    for (const auto& h : cases) {
      std::vector<Board> mh;
      for (const Board& b : h) mh.push_back(mirror(b));
      const Planes a = encode_boards(h, 1), b = encode_boards(mh, 1);
      for (int plane = 0; plane < kInputPlanes; ++plane) {
        if (plane == kPlaneSideToMove) continue;  // the only absolute plane
        for (int s = 0; s < 64; ++s)
          ASSERT_EQ(a[plane * 64 + s], b[plane * 64 + s]) << to_fen(h[0]) << " plane " << plane << " sq " << s;
      }
      EXPECT_NE(a[kPlaneSideToMove * 64], b[kPlaneSideToMove * 64]);
      for (float v : a) {
        EXPECT_GE(v, 0.0f);
        EXPECT_LE(v, 1.0f);
      }
      ++compared;
    }
  }
  std::cout << compared << " positions compared with their mirrored twins\n";
}

TEST(Encoding, PassedAndIsolatedPawns) {
  // a2 and h4 are passed; d5 is not (e6 guards its path). All three are isolated.
  const Planes p = encode_fen("4k3/8/4p3/3P4/7P/8/P7/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(p, kPlanePassedPawns), squares({"a2", "h4"}));
  EXPECT_EQ(nonzero(p, kPlaneIsolatedPawns), squares({"a2", "d5", "h4"}));
  // a2 and b3 support each other; e4 is alone. Nothing of Black's: all passed.
  const Planes q = encode_fen("4k3/8/8/8/4P3/1P6/P7/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(q, kPlaneIsolatedPawns), squares({"e4"}));
  EXPECT_EQ(nonzero(q, kPlanePassedPawns), squares({"a2", "b3", "e4"}));
  // The same seen by Black (mirrored): Black's e5 pawn is isolated.
  const Planes r = encode_fen("4k3/p7/1p6/4p3/8/8/8/4K3 b - - 0 1");
  EXPECT_EQ(nonzero(r, kPlaneIsolatedPawns), squares({"e4"}));
  // Weak squares: with no pawns, all of ranks 3-6; a lone e2 pawn covers d/f 3-6.
  EXPECT_EQ(nonzero(encode_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1"), kPlaneWeakSquares),
            kRank3 | kRank4 | kRank5 | kRank6);
  const Bitboard df = (kFileA << 3) | (kFileA << 5);
  EXPECT_EQ(nonzero(encode_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"), kPlaneWeakSquares),
            (kRank3 | kRank4 | kRank5 | kRank6) & ~df);
  // A pawn on e5 can no longer reach d4/f4 (or d3, f3...).
  EXPECT_EQ(nonzero(encode_fen("4k3/8/8/4P3/8/8/8/4K3 w - - 0 1"), kPlaneWeakSquares),
            (kRank3 | kRank4 | kRank5 | kRank6) & ~squares({"d6", "f6"}));
}

TEST(Encoding, PinnedPieces) {
  const Planes p = encode_fen("4r1k1/8/8/8/8/8/4N3/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(p, kPlanePinned), squares({"e2"}));
  EXPECT_EQ(at(p, kPlaneKnightMobility, "e2"), 0.0f);
  // Two of ours between: no pin. A diagonal pin of a bishop keeps its diagonal moves.
  EXPECT_TRUE(plane_all(encode_fen("4r1k1/8/8/8/8/4P3/4N3/4K3 w - - 0 1"), kPlanePinned, 0.0f));
  const Planes d = encode_fen("6k1/8/8/b7/8/8/3B4/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(d, kPlanePinned), squares({"d2"}));
  EXPECT_FLOAT_EQ(at(d, kPlaneBishopMobility, "d2"), 3.0f / 13.0f);  // c3, b4, a5
  // For Black, flipped: Black's knight e7 pinned by a rook on e1 shows on e2.
  const Planes b = encode_fen("4k3/4n3/8/8/8/8/8/4R1K1 b - - 0 1");
  EXPECT_EQ(nonzero(b, kPlanePinned), squares({"e2"}));
}

TEST(Encoding, HangingAndAttackedByLower) {
  // Bishop e4 attacked by the d5 pawn, undefended: hanging and attacked by a lower piece.
  const Planes p = encode_fen("4k3/8/8/3p4/4B3/8/8/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(p, kPlaneHanging), squares({"e4"}));
  EXPECT_EQ(nonzero(p, kPlaneAttackedByLower), squares({"e4"}));
  // Defended by the c3 knight: no longer hanging, still attacked by the pawn.
  const Planes q = encode_fen("4k3/8/8/3p4/4B3/2N5/8/4K3 w - - 0 1");
  EXPECT_TRUE(plane_all(q, kPlaneHanging, 0.0f));
  EXPECT_EQ(nonzero(q, kPlaneAttackedByLower), squares({"e4"}));
  // A rook attacked by a rook: hanging but not by a lower piece; a queen by a rook: both.
  const Planes r = encode_fen("3rk3/8/8/3R4/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(r, kPlaneHanging), squares({"d5"}));
  EXPECT_TRUE(plane_all(r, kPlaneAttackedByLower, 0.0f));
  const Planes s = encode_fen("3rk3/8/8/3Q4/8/8/8/3RK3 w - - 0 1");
  EXPECT_TRUE(plane_all(s, kPlaneHanging, 0.0f));  // the d1 rook defends it
  EXPECT_EQ(nonzero(s, kPlaneAttackedByLower), squares({"d5"}));
}

TEST(Encoding, TrappedPieces) {
  // Bxa7?? b6: b8 is covered by the c8 king, b6 is a pawn defended by c7.
  const Planes p = encode_fen("2k5/B1p5/1p6/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(p, kPlaneTrapped), squares({"a7"}));
  // Without the c7 pawn, taking b6 is safe.
  EXPECT_TRUE(plane_all(encode_fen("2k5/B7/1p6/8/8/8/8/4K3 w - - 0 1"), kPlaneTrapped, 0.0f));
  // A knight on a1 whose b3 and c2 are covered by pawns.
  const Planes n = encode_fen("4k3/8/8/8/p1p5/1p6/8/N3K3 w - - 0 1");
  EXPECT_EQ(nonzero(n, kPlaneTrapped), squares({"a1"}));
  // Blocked-in pieces (the start position) are not "trapped".
  EXPECT_TRUE(plane_all(encode_fen(kStartFen), kPlaneTrapped, 0.0f));
}

TEST(Encoding, KingZoneAndCentre) {
  // Nc3 hits d5 and e4; with Black's king on e6, d5 is in its zone.
  const Planes p = encode_fen("8/8/4k3/8/8/2N5/8/4K3 w - - 0 1");
  EXPECT_EQ(nonzero(p, kPlaneCentreControl), squares({"d5", "e4"}));
  EXPECT_EQ(at(p, kPlaneCentreControl, "e4"), 0.25f);
  EXPECT_EQ(nonzero(p, kPlaneTheirKingZoneAttack), squares({"d5"}));
  EXPECT_EQ(at(p, kPlaneTheirKingZoneAttack, "d5"), 0.25f);
  // Five attackers on e4 (Nc3, d3, f3, Ng3, Qe2) clip to 1.
  const Planes q = encode_fen("k7/8/8/8/8/2NP1PN1/4Q3/4K3 w - - 0 1");
  EXPECT_EQ(at(q, kPlaneCentreControl, "e4"), 1.0f);
  EXPECT_EQ(at(q, kPlaneCentreControl, "d5"), 0.25f);  // Nc3
  EXPECT_EQ(at(q, kPlaneCentreControl, "e5"), 0.25f);  // Qe2 through the empty e4
  EXPECT_EQ(at(q, kPlaneCentreControl, "d4"), 0.0f);   // the d3 pawn blocks Qe2
  EXPECT_EQ(nonzero(q, kPlaneCentreControl), squares({"d5", "e4", "e5"}));
}

// The attack planes against Board::attackers_to, square by square (a slow reference that
// shares none of the encoder's bit-sliced counting).
TEST(Encoding, AttackPlanesMatchAttackersTo) {
  std::size_t checked = 0;
  for (const Board& root : perft_suite_positions()) {
    MoveList list;
    legal_moves(root, list);
    std::vector<Board> boards{root};
    for (Move m : list) {
      Board child = root;
      child.play(m);
      boards.push_back(child);
    }
    for (const Board& b : boards) {
      const Planes p = encode_boards({b});
      const Color us = b.side, them = ~us;
      const int flip = us == kWhite ? 0 : 56;
      const Bitboard occ = b.occupied();
      const Square our_k = b.king_square(us), their_k = b.king_square(them);
      const Bitboard their_zone = king_attacks(their_k) | bb(their_k);
      const Bitboard our_zone = king_attacks(our_k) | bb(our_k);
      const Bitboard centre = squares({"d4", "e4", "d5", "e5"});
      for (Square s = 0; s < 64; ++s) {
        const Bitboard ours = b.attackers_to(s, us, occ), theirs = b.attackers_to(s, them, occ);
        const Square e = s ^ flip;  // the square in the encoding's frame
        EXPECT_EQ(at(p, kPlaneOurAttacks, square_name(e)), ours ? 1.0f : 0.0f);
        EXPECT_EQ(at(p, kPlaneTheirAttacks, square_name(e)), theirs ? 1.0f : 0.0f);
        auto quarter = [](int n) { return n >= 4 ? 1.0f : 0.25f * float(n); };
        EXPECT_EQ(p[kPlaneTheirKingZoneAttack * 64 + e],
                  (bb(s) & their_zone) ? quarter(popcount(ours)) : 0.0f);
        EXPECT_EQ(p[kPlaneOurKingZoneDefence * 64 + e],
                  (bb(s) & our_zone) ? quarter(popcount(ours & ~bb(our_k))) : 0.0f);
        EXPECT_EQ(p[kPlaneCentreControl * 64 + e], (bb(e) & centre) ? quarter(popcount(ours)) : 0.0f);
        const Piece pc = b.piece_on(s);
        const bool our_piece = pc != kNoPiece && color_of(pc) == us && type_of(pc) != kKing;
        EXPECT_EQ(p[kPlaneHanging * 64 + e], our_piece && theirs && !ours ? 1.0f : 0.0f) << to_fen(b);
      }
      EXPECT_EQ(plane_all(p, kPlaneInCheck, 1.0f), b.in_check());
      ++checked;
    }
  }
  std::cout << checked << " positions checked square by square\n";
}

TEST(Encoding, AllPlanesCovered) {
  // Every plane of the table is written by some perft-suite position.
  std::vector<bool> used(kInputPlanes, false);
  for (const Board& root : perft_suite_positions()) {
    MoveList list;
    legal_moves(root, list);
    for (Move m : list) {
      Board child = root;
      child.play(m);
      std::vector<Board> h{child, root, root, root};
      const Planes p = encode_boards(h, 1);
      for (int plane = 0; plane < kInputPlanes; ++plane)
        if (nonzero(p, plane)) used[plane] = true;
    }
  }
  for (int plane = 0; plane < kInputPlanes; ++plane) EXPECT_TRUE(used[plane]) << plane;
}

}  // namespace
}  // namespace pgmate::nn
