// Rules on crafted positions: crowning ends the move, captures are mandatory, the
// `longest` rule, a king's loop, game status; and the counting paths against the lists.
#include <gtest/gtest.h>

#include <algorithm>

#include "checkers/notation.h"
#include "checkers/perft.h"
#include "playouts.h"

namespace pgmate::checkers {
namespace {

std::vector<std::string> texts(const Board& b, CaptureRule rule = CaptureRule::kAny) {
  std::vector<std::string> out;
  for (const Move& m : sorted_legal_moves(b, rule)) out.push_back(to_text(m));
  return out;
}

using Texts = std::vector<std::string>;

TEST(CheckersMovegen, CrowningEndsTheMove) {
  // White's man on 11 takes 7 and lands on 2, Black's back row: crowned, the move ends,
  // though as a king it could go on over 6 to 9.
  const Board b = parse_fen("W:W11:B6,7");
  EXPECT_EQ(texts(b), Texts{"11x2"});
  const Move m = parse_move(b, "11x2");
  EXPECT_TRUE(m.crowns);
  Board after = b;
  after.play(m);
  EXPECT_EQ(to_fen(after), "B:WK2:B6");
  // A king already there does go on.
  EXPECT_EQ(texts(parse_fen("W:WK11:B6,7")), Texts{"11x2x9"});

  // The same for Black, crowning on 29-32: 22x31 ends, though 26 would be next.
  const Board black = parse_fen("B:W26,27:B22");
  EXPECT_EQ(texts(black), Texts{"22x31"});
  Board after_black = black;
  after_black.play(parse_move(black, "22x31"));
  EXPECT_EQ(to_fen(after_black), "W:W27:BK31");
  EXPECT_EQ(texts(parse_fen("B:W26,27:BK22")), Texts{"22x31x24"});

  // A simple move onto the crowning row crowns too.
  const Board step = parse_fen("W:W6:B28");
  const Move up = parse_move(step, "6-1");
  EXPECT_TRUE(up.crowns);
  Board s = step;
  s.play(up);
  EXPECT_EQ(to_fen(s), "B:WK1:B28");
  // A king moving within the row is no crowning.
  EXPECT_FALSE(parse_move(parse_fen("W:WK6:B28"), "6-1").crowns);
}

TEST(CheckersMovegen, CapturesAreMandatory) {
  Board b = Board::start();
  b.play(parse_move(b, "11-15"));
  b.play(parse_move(b, "22-18"));
  EXPECT_EQ(texts(b), Texts{"15x22"});
  // On every playout position: a capture in the list means only captures.
  for (const Board& p : testing::playout_positions(3, 40)) {
    MoveList list;
    legal_moves(p, list);
    const bool any = std::any_of(list.begin(), list.end(), [](const Move& m) { return m.is_capture(); });
    const bool all = std::all_of(list.begin(), list.end(), [](const Move& m) { return m.is_capture(); });
    if (list.size > 0) {
      EXPECT_EQ(any, all) << to_fen(p);
    }
  }
}

TEST(CheckersMovegen, MenMoveForwardKingsEveryWay) {
  EXPECT_EQ(texts(parse_fen("B:W32:B14")), (Texts{"14-17", "14-18"}));
  EXPECT_EQ(texts(parse_fen("W:W14:B1")), (Texts{"14-9", "14-10"}));
  EXPECT_EQ(texts(parse_fen("W:WK14:B1")), (Texts{"14-9", "14-10", "14-17", "14-18"}));
  // Edges: a man on 13 (file a) has one forward square; a king in the corner 4 one square.
  EXPECT_EQ(texts(parse_fen("B:W32:B13")), Texts{"13-17"});
  EXPECT_EQ(texts(parse_fen("B:W32:BK4")), Texts{"4-8"});
  // Men do not take backwards; kings do.
  EXPECT_EQ(texts(parse_fen("W:W14:B18")), (Texts{"14-9", "14-10"}));
  EXPECT_EQ(texts(parse_fen("W:WK14:B18")), Texts{"14x23"});
}

TEST(CheckersMovegen, LongestRule) {
  // Black: 10 can take 14 then 22 (two pieces) or 15 (one); 12 can take 16 (one).
  const Board b = parse_fen("B:W14,15,16,22:B10,12");
  EXPECT_EQ(texts(b), (Texts{"10x17x26", "10x19", "12x19"}));
  EXPECT_EQ(texts(b, CaptureRule::kLongest), Texts{"10x17x26"});
  EXPECT_EQ(count_legal_moves(b, CaptureRule::kAny), 3u);
  EXPECT_EQ(count_legal_moves(b, CaptureRule::kLongest), 1u);
  EXPECT_EQ(perft(b, 1, CaptureRule::kLongest), 1u);
  // Two sequences of the same greatest length both stay.
  const Board two = parse_fen("B:W14,15,22,24:B10");
  EXPECT_EQ(texts(two), (Texts{"10x17x26", "10x19x28"}));
  EXPECT_EQ(texts(two, CaptureRule::kLongest), (Texts{"10x17x26", "10x19x28"}));
  // Without captures the rule changes nothing.
  EXPECT_EQ(texts(Board::start(), CaptureRule::kLongest), texts(Board::start()));
}

TEST(CheckersMovegen, KingLoopBothWaysAreTwoMoves) {
  // The king on 22 goes round 18, 10, 9, 17 and back, either way: the published perft
  // counts count such sequences separately, and so does the generator.
  const Board b = parse_fen("W:WK22:B9,10,17,18");
  EXPECT_EQ(texts(b), (Texts{"22x13x6x15x22", "22x15x6x13x22"}));
  MoveList list;
  legal_moves(b, list);
  ASSERT_EQ(list.size, 2);
  EXPECT_EQ(list.moves[0].captured, list.moves[1].captured);
  EXPECT_EQ(list.moves[0].from, list.moves[0].to);
  EXPECT_NE(list.moves[0], list.moves[1]);
  Board after = b;
  after.play(list.moves[0]);
  EXPECT_EQ(to_fen(after), "B:WK22:B");
  EXPECT_EQ(status(after), Status::kWhiteWins);
}

TEST(CheckersMovegen, Status) {
  EXPECT_EQ(status(Board::start()), Status::kOngoing);
  EXPECT_STREQ(status_name(Status::kOngoing), "ongoing");
  EXPECT_STREQ(status_name(Status::kBlackWins), "black_wins");
  EXPECT_STREQ(status_name(Status::kWhiteWins), "white_wins");
  EXPECT_EQ(status(parse_fen("B:W21:B")), Status::kWhiteWins);   // Black has no pieces
  EXPECT_EQ(status(parse_fen("W:W:B1")), Status::kBlackWins);    // White has no pieces
  EXPECT_EQ(status(parse_fen("B:W29,30:B25")), Status::kWhiteWins);  // Black's man is blocked
  EXPECT_EQ(status(parse_fen("W:W29,30:B25")), Status::kOngoing);
  EXPECT_EQ(status(parse_fen("W:W5:B1")), Status::kBlackWins);   // White's man blocked at the edge
  // A side whose only moves are captures is not blocked.
  EXPECT_EQ(status(parse_fen("B:W25,26:B22")), Status::kOngoing);
  EXPECT_EQ(texts(parse_fen("B:W25,26:B22")), (Texts{"22x29", "22x31"}));
  for (const Board& p : testing::playout_positions(9, 40, 300)) {
    MoveList list;
    legal_moves(p, list);
    EXPECT_EQ(has_legal_move(p), list.size > 0) << to_fen(p);
    if (list.size == 0) {
      EXPECT_EQ(status(p), p.side == kWhite ? Status::kBlackWins : Status::kWhiteWins);
    }
  }
}

// Plain recursion over the move lists, no bulk counting.
std::uint64_t perft_by_lists(const Board& b, int depth, CaptureRule rule) {
  if (depth == 0) return 1;
  MoveList list;
  legal_moves(b, list, rule);
  std::uint64_t n = 0;
  for (const Move& m : list) {
    Board next = b;
    next.play(m);
    n += perft_by_lists(next, depth - 1, rule);
  }
  return n;
}

TEST(CheckersMovegen, CountingAgreesWithTheLists) {
  const auto positions = testing::playout_positions(21, 30);
  for (CaptureRule rule : {CaptureRule::kAny, CaptureRule::kLongest}) {
    for (size_t i = 0; i < positions.size(); ++i) {
      const Board& b = positions[i];
      MoveList list;
      legal_moves(b, list, rule);
      ASSERT_EQ(count_legal_moves(b, rule), std::uint64_t(list.size)) << to_fen(b);
      if (i % 10 == 0) {
        ASSERT_EQ(perft(b, 3, rule), perft_by_lists(b, 3, rule)) << to_fen(b);
      }
    }
  }
}

TEST(CheckersMovegen, MoveFieldsAreConsistent) {
  for (const Board& b : testing::playout_positions(4, 40)) {
    MoveList list;
    legal_moves(b, list);
    for (const Move& m : list) {
      EXPECT_EQ(popcount(m.captured), m.captures);
      EXPECT_EQ(m.captured & ~b.pieces(~b.side), 0u) << to_text(m);
      EXPECT_TRUE(b.pieces(b.side) & bit(m.from));
      // A man's move crowns exactly when it ends on its crowning row.
      const bool man = !(b.kings & bit(m.from));
      EXPECT_EQ(bool(m.crowns), man && (crown_row(b.side) & bit(m.to))) << to_text(m);
      for (int i = m.captures > 0 ? m.captures - 1 : 0; i < kMaxCaptures - 1; ++i) EXPECT_EQ(m.path[i], 0);
    }
  }
}

}  // namespace
}  // namespace pgmate::checkers
