// Move text: round trips over every legal move of many playout positions, shorthand jumps,
// and the errors for bad and illegal text.
#include <gtest/gtest.h>

#include <set>

#include "checkers/notation.h"
#include "checkers/perft.h"
#include "playouts.h"

namespace pgmate::checkers {
namespace {

TEST(CheckersNotation, StartMoves) {
  std::vector<std::string> texts;
  for (const Move& m : sorted_legal_moves(Board::start())) texts.push_back(to_text(m));
  EXPECT_EQ(texts, (std::vector<std::string>{"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}));
  const Move m = parse_move(Board::start(), "11-15");
  EXPECT_EQ(kSquareToPdn[m.from], 11);
  EXPECT_EQ(kSquareToPdn[m.to], 15);
  EXPECT_FALSE(m.is_capture());
  EXPECT_EQ(m.captured, 0u);
}

TEST(CheckersNotation, RoundTripsEveryMoveOfPlayoutPositions) {
  int moves = 0, jumps = 0, multi = 0;
  for (CaptureRule rule : {CaptureRule::kAny, CaptureRule::kLongest}) {
    for (const Board& b : testing::playout_positions(rule == CaptureRule::kAny ? 5 : 6, 60, 200, rule)) {
      MoveList list;
      legal_moves(b, list, rule);
      std::set<std::string> seen;
      for (const Move& m : list) {
        const std::string text = to_text(m);
        EXPECT_TRUE(seen.insert(text).second) << "two moves read " << text << " in " << to_fen(b);
        const Move back = parse_move(b, text, rule);
        EXPECT_EQ(back, m) << text << " in " << to_fen(b);
        EXPECT_EQ(to_text(back), text);
        EXPECT_TRUE(is_legal(b, m, rule));
        ++moves;
        jumps += m.is_capture();
        multi += m.captures > 1;
      }
    }
  }
  EXPECT_GT(moves, 10000);
  EXPECT_GT(jumps, 1000);
  EXPECT_GT(multi, 50);
}

TEST(CheckersNotation, JumpPathsAndShorthand) {
  // After 11-15 22-18, Black must take: 15x22.
  Board b = Board::start();
  b.play(parse_move(b, "11-15"));
  b.play(parse_move(b, "22-18"));
  EXPECT_EQ(to_text(parse_move(b, "15x22")), "15x22");
  EXPECT_EQ(to_text(parse_move(b, "15X22")), "15x22");
  EXPECT_EQ(to_text(parse_move(b, " 15x22 ")), "15x22");

  // A double jump may be written start and end only.
  const Board d = parse_fen("B:W14,15,16,22:B10,12");
  EXPECT_EQ(to_text(parse_move(d, "10x17x26")), "10x17x26");
  EXPECT_EQ(to_text(parse_move(d, "10x26")), "10x17x26");

  // A king's loop both ways: same start, end and pieces; only the full path tells them apart.
  const Board loop = parse_fen("W:WK22:B9,10,17,18");
  EXPECT_EQ(to_text(parse_move(loop, "22x15x6x13x22")), "22x15x6x13x22");
  EXPECT_EQ(to_text(parse_move(loop, "22x13x6x15x22")), "22x13x6x15x22");
  try {
    parse_move(loop, "22x22");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous: 2 sequences go from 22 to 22"), std::string::npos) << e.what();
  }
}

void expect_error(const Board& b, const std::string& text, const std::string& needle,
                  CaptureRule rule = CaptureRule::kAny) {
  try {
    parse_move(b, text, rule);
    ADD_FAILURE() << "accepted " << text;
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what() << "\nwanted: " << needle;
  }
}

TEST(CheckersNotation, Errors) {
  const Board s = Board::start();
  // Malformed text.
  expect_error(s, "", "invalid checkers move \"\": empty");
  expect_error(s, "11", "expected at least two squares");
  expect_error(s, "11-", "a square number is missing at the end");
  expect_error(s, "a-15", "character 'a' at offset 0: expected a square number 1-32");
  expect_error(s, "11/15", "character '/' at offset 2: expected '-' (a move) or 'x' (a jump)");
  expect_error(s, "11-33", "square \"33\" at offset 3 is out of range 1-32");
  expect_error(s, "0-4", "square \"0\" at offset 0 is out of range 1-32");
  expect_error(s, "11-15x18", "mixes '-' and 'x'");
  expect_error(s, "11-15-18", "a simple move joins two squares");
  expect_error(s, "1x2x3x4x5x6x7x8x9x10x11", "at most 9 pieces");
  // Illegal here.
  expect_error(s, "11-15x", "mixes '-' and 'x'");
  expect_error(s, "13-17", "illegal move \"13-17\" in " + std::string(kStartFen) + ": no black piece on 13");
  expect_error(s, "21-17", "the piece on 21 is White's, and Black is to move");
  expect_error(s, "11x", "a square number is missing at the end");
  expect_error(s, "11-18", "the piece on 11 cannot move to 18");
  expect_error(s, "8-12", "the piece on 8 cannot move to 12");
  expect_error(s, "11x18", "there is no capture here: the legal moves are");

  Board b = Board::start();
  b.play(parse_move(b, "11-15"));
  b.play(parse_move(b, "22-18"));
  expect_error(b, "12-16", "a capture is mandatory: 15x22");
  expect_error(b, "12x19", "the piece on 12 cannot capture; the captures are 15x22");
  expect_error(b, "15x24", "no capture sequence from 15 ends on 24; the piece's captures are 15x22");

  const Board d = parse_fen("B:W14,15,16,22:B10,12");
  expect_error(d, "10x19", "no longest capture sequence from 10 ends on 19", CaptureRule::kLongest);
  expect_error(d, "10x17", "no capture sequence from 10 ends on 17");
  expect_error(d, "10x19x26", "no capture sequence follows that path");
}

// An illegal move is an IllegalMove (SQL: 22023); text that is no move, a plain ParseError
// (22P02).
TEST(CheckersNotation, IllegalMoveIsItsOwnType) {
  const Board s = Board::start();
  for (const char* text : {"13-17", "21-17", "11-18", "11x18"}) EXPECT_THROW(parse_move(s, text), IllegalMove) << text;
  for (const char* text : {"", "11", "11-33", "a-15", "11-15x18"}) {
    try {
      parse_move(s, text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const IllegalMove& e) {
      ADD_FAILURE() << text << " is not a move at all, yet: " << e.what();
    } catch (const ParseError&) {
    }
  }
}

}  // namespace
}  // namespace pgmate::checkers
