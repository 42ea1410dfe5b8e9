// The 64 x 73 policy layout: geometry of every slot, the move <-> slot round trip on the
// perft suite, promotions, castling, en passant and the colour flip.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "nn/policy.h"

namespace pgmate::nn {
namespace {

using namespace pgmate::chess;

std::vector<Board> perft_suite_positions() {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  std::vector<Board> boards;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    boards.push_back(parse_fen(line.substr(0, line.find(';'))));
  }
  return boards;
}

int slot_of(const Board& b, std::string_view uci) { return policy_slot(parse_uci(b, uci), b.side); }

TEST(Policy, EverySlotsGeometry) {
  int valid = 0, reachable = 0, queen_like = 0, knight = 0, under = 0;
  for (int slot = 0; slot < kPolicySize; ++slot) {
    const int from = slot / kMoveTypes, type = slot % kMoveTypes;
    const int to = slot_target(slot);
    EXPECT_EQ(slot_is_valid_geometry(slot), to >= 0);
    if (to < 0) {
      EXPECT_FALSE(slot_is_reachable(slot));
      continue;
    }
    ++valid;
    if (slot_is_reachable(slot)) ++reachable;
    const int dx = file_of(to) - file_of(from), dy = rank_of(to) - rank_of(from);
    Move m(from, to);
    if (type < 56) {
      ++queen_like;
      const int dir = type / 7, dist = type % 7 + 1;
      const int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
      EXPECT_EQ(std::max(ax, ay), dist) << slot;
      EXPECT_TRUE(ax == 0 || ay == 0 || ax == ay) << slot;
      static const int kDx[8] = {0, 1, 1, 1, 0, -1, -1, -1}, kDy[8] = {1, 1, 0, -1, -1, -1, 0, 1};
      EXPECT_EQ(dx, kDx[dir] * dist) << slot;
      EXPECT_EQ(dy, kDy[dir] * dist) << slot;
    } else if (type < 64) {
      ++knight;
      static const int kDx[8] = {1, 2, 2, 1, -1, -2, -2, -1}, kDy[8] = {2, 1, -1, -2, -2, -1, 1, 2};
      EXPECT_EQ(dx, kDx[type - 56]) << slot;
      EXPECT_EQ(dy, kDy[type - 56]) << slot;
    } else {
      ++under;
      const int dir = (type - 64) / 3, piece = (type - 64) % 3;
      EXPECT_EQ(dy, 1) << slot;
      EXPECT_EQ(dx, dir - 1) << slot;
      m = Move(from, to, kPromotion, PieceType(kKnight + piece));
      EXPECT_EQ(slot_is_reachable(slot), rank_of(from) == 6) << slot;
    }
    // The same slot for White as is, and for Black on the flipped board.
    EXPECT_EQ(policy_slot(m, kWhite), slot);
    const Move flipped(from ^ 56, to ^ 56, m.kind(), m.kind() == kPromotion ? m.promotion() : kKnight);
    EXPECT_EQ(policy_slot(flipped, kBlack), slot);
  }
  EXPECT_EQ(queen_like, 1456);
  EXPECT_EQ(knight, 336);
  EXPECT_EQ(under, 462);
  EXPECT_EQ(valid, kGeometricSlots);
  EXPECT_EQ(valid, 2254);
  EXPECT_EQ(reachable, kReachableSlots);
  EXPECT_EQ(reachable, 1858);
  EXPECT_EQ(slot_target(-1), -1);
  EXPECT_EQ(slot_target(kPolicySize), -1);
}

TEST(Policy, NonMovesHaveNoSlot) {
  EXPECT_EQ(policy_slot(Move(12, 38), kWhite), -1);  // e2g5
  EXPECT_EQ(policy_slot(Move(0, 55), kWhite), -1);                      // a1h7
  EXPECT_EQ(policy_slot(Move(52, 60, kPromotion, kRook), kBlack), -1);  // e7e8r: backwards for Black
  EXPECT_EQ(policy_slot(Move(51, 60, kPromotion, kRook), kWhite), 51 * 73 + 64 + 2 * 3 + 2);
}

TEST(Policy, WhiteAndBlackPawnPushShareASlot) {
  Board b = parse_fen(kStartFen);
  const int e2e4 = slot_of(b, "e2e4");
  EXPECT_EQ(e2e4, 12 * 73 + 1);  // e2, north, distance 2
  b.play(parse_uci(b, "e2e4"));
  EXPECT_EQ(slot_of(b, "e7e5"), e2e4);
  EXPECT_EQ(slot_of(b, "g8f6"), slot_of(parse_fen(kStartFen), "g1f3"));
  EXPECT_EQ(slot_of(parse_fen(kStartFen), "g1f3"), 6 * 73 + 63);  // (-1, +2): the last knight type
  EXPECT_EQ(slot_of(parse_fen(kStartFen), "b1c3"), 1 * 73 + 56);  // (+1, +2): the first
  EXPECT_EQ(policy_move(e2e4, b), parse_uci(b, "e7e5"));
  EXPECT_TRUE(policy_move(e2e4, parse_fen(kStartFen)) == Move(12, 28));
}

TEST(Policy, Castling) {
  const Board w = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  const Board b = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1");
  EXPECT_EQ(slot_of(w, "e1g1"), 4 * 73 + 2 * 7 + 1);  // east, distance 2
  EXPECT_EQ(slot_of(w, "e1c1"), 4 * 73 + 6 * 7 + 1);  // west, distance 2
  EXPECT_EQ(slot_of(b, "e8g8"), slot_of(w, "e1g1"));
  EXPECT_EQ(slot_of(b, "e8c8"), slot_of(w, "e1c1"));
  for (const Board& x : {w, b}) {
    for (int slot : {4 * 73 + 15, 4 * 73 + 43}) {
      const Move m = policy_move(slot, x);
      EXPECT_EQ(m.kind(), kCastling) << to_fen(x);
      EXPECT_EQ(policy_slot(m, x.side), slot);
    }
  }
  // Without the right, the slot is empty.
  EXPECT_TRUE(policy_move(4 * 73 + 15, parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w Qkq - 0 1")).is_null());
}

TEST(Policy, Promotions) {
  // White pawn b7 can push to b8 or take a8 / c8; Black pawn g2 can push or take f1 / h1.
  const Board w = parse_fen("r1n1k3/1P6/8/8/8/8/6p1/4KB1R w - - 0 1");
  Board b = w;
  b.side = kBlack;
  b.key = b.compute_key();
  for (const Board& x : {w, b}) {
    MoveList list;
    legal_moves(x, list);
    int promotions = 0;
    for (Move m : list) {
      if (m.kind() != kPromotion) continue;
      ++promotions;
      const int slot = policy_slot(m, x.side), type = slot % 73;
      if (m.promotion() == kQueen) {
        EXPECT_LT(type, 56) << to_uci(m);
        // Queen promotion = the plain queen-like move one step forward.
        EXPECT_EQ(type % 7, 0) << to_uci(m);
        EXPECT_EQ(slot, policy_slot(Move(m.from(), m.to()), x.side));
      } else {
        EXPECT_GE(type, 64) << to_uci(m);
        EXPECT_LE(type, 72) << to_uci(m);
        EXPECT_EQ((type - 64) % 3, m.promotion() - kKnight) << to_uci(m);
        const int dx = file_of(m.to()) - file_of(m.from());
        EXPECT_EQ((type - 64) / 3, dx + 1) << to_uci(m);
      }
      EXPECT_EQ(policy_move(slot, x), m) << to_uci(m);
    }
    EXPECT_EQ(promotions, 12) << to_fen(x);
  }
  EXPECT_EQ(slot_of(w, "b7a8n") % 73, 64);  // capture left, knight
  EXPECT_EQ(slot_of(w, "b7b8b") % 73, 68);  // straight, bishop
  EXPECT_EQ(slot_of(w, "b7c8r") % 73, 72);  // capture right, rook
  EXPECT_EQ(slot_of(b, "g2f1n") % 73, 64);  // toward file a is "left" for Black too
  EXPECT_EQ(slot_of(b, "g2h1r") % 73, 72);
  EXPECT_EQ(slot_of(w, "b7b8q"), (49) * 73 + 0);  // b7, north, distance 1
}

TEST(Policy, EnPassant) {
  const Board b = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
  const int slot = slot_of(b, "e5d6");
  EXPECT_EQ(slot, 36 * 73 + 7 * 7);  // e5, north-west, distance 1
  EXPECT_EQ(policy_move(slot, b).kind(), kEnPassant);
}

TEST(Policy, RoundTripOnPerftSuiteAndChildren) {
  const std::vector<Board> roots = perft_suite_positions();
  ASSERT_EQ(roots.size(), 127u);
  std::size_t positions = 0, moves_checked = 0;
  auto check = [&](const Board& b, std::set<int>& seen) {
    MoveList list;
    legal_moves(b, list);
    std::vector<int> slots(list.size);
    policy_slots(list, b.side, slots.data());
    seen.clear();
    for (int i = 0; i < list.size; ++i) {
      const Move m = list.moves[i];
      const int slot = slots[i];
      ASSERT_GE(slot, 0) << to_fen(b) << " " << to_uci(m);
      ASSERT_LT(slot, kPolicySize);
      EXPECT_TRUE(slot_is_reachable(slot)) << to_fen(b) << " " << to_uci(m);
      EXPECT_TRUE(seen.insert(slot).second) << "two moves in one slot: " << to_fen(b) << " " << to_uci(m);
      EXPECT_EQ(policy_move(slot, b), m) << to_fen(b) << " " << to_uci(m);
      // The board-free move (no castling / en-passant kind) has the same slot.
      EXPECT_EQ(policy_slot(board_free(m), b.side), slot);
      ++moves_checked;
    }
    ++positions;
  };
  for (const Board& root : roots) {
    std::set<int> slots, child_slots;
    check(root, slots);
    // No slot outside the legal moves gives a move.
    int found = 0;
    for (int slot = 0; slot < kPolicySize; ++slot)
      if (!policy_move(slot, root).is_null()) {
        ++found;
        EXPECT_TRUE(slots.count(slot)) << to_fen(root) << " slot " << slot;
      }
    EXPECT_EQ(found, int(slots.size())) << to_fen(root);
    MoveList list;
    legal_moves(root, list);
    for (Move m : list) {
      Board child = root;
      child.play(m);
      check(child, child_slots);
    }
  }
  std::cout << positions << " positions, " << moves_checked << " moves round-tripped\n";
}

TEST(Policy, OutOfRangeSlots) {
  const Board b = parse_fen(kStartFen);
  EXPECT_TRUE(policy_move(-1, b).is_null());
  EXPECT_TRUE(policy_move(kPolicySize, b).is_null());
  EXPECT_TRUE(policy_move(0, b).is_null());                 // a1 rook, north: blocked
  EXPECT_TRUE(policy_move(52 * 73 + 4 * 7, b).is_null());   // e7 holds Black's pawn
  EXPECT_TRUE(policy_move(28 * 73 + 0, b).is_null());       // e4 is empty
  EXPECT_TRUE(policy_move(12 * 73 + 64, b).is_null());      // e2 "under-promotion"
}

}  // namespace
}  // namespace pgmate::nn
