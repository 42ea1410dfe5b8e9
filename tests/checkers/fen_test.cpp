// The PDN FEN form: round trips, canonical output, and every rejection with its message.
#include <gtest/gtest.h>

#include "checkers/fen.h"
#include "playouts.h"

namespace pgmate::checkers {
namespace {

TEST(CheckersFen, StartPosition) {
  EXPECT_EQ(parse_fen("startpos"), Board::start());
  EXPECT_EQ(parse_fen(kStartFen), Board::start());
  EXPECT_EQ(to_fen(Board::start()), kStartFen);
  // Ranges are read too.
  EXPECT_EQ(parse_fen("B:W21-32:B1-12"), Board::start());
  EXPECT_EQ(parse_fen("B:B1-12:W21-32"), Board::start());
}

TEST(CheckersFen, KingsAndCanonicalOrder) {
  const Board b = parse_fen("W:W21,K3:BK30,12");
  EXPECT_EQ(b.side, kWhite);
  EXPECT_EQ(b.white, bit(kPdnToSquare[3]) | bit(kPdnToSquare[21]));
  EXPECT_EQ(b.black, bit(kPdnToSquare[12]) | bit(kPdnToSquare[30]));
  EXPECT_EQ(b.kings, bit(kPdnToSquare[3]) | bit(kPdnToSquare[30]));
  EXPECT_EQ(to_fen(b), "W:WK3,21:B12,K30");
  EXPECT_EQ(to_fen(parse_fen("B:BK1-3,5:WK29-30")), "B:WK29,K30:BK1,K2,K3,5");
}

TEST(CheckersFen, EmptySides) {
  const Board b = parse_fen("W:W:B1");
  EXPECT_EQ(b.white, 0u);
  EXPECT_EQ(to_fen(b), "W:W:B1");
  EXPECT_EQ(to_fen(parse_fen("B:W:B")), "B:W:B");
}

TEST(CheckersFen, RoundTripsRandomPositions) {
  for (const Board& b : testing::playout_positions(11, 40)) {
    const std::string fen = to_fen(b);
    EXPECT_EQ(parse_fen(fen), b) << fen;
    EXPECT_EQ(to_fen(parse_fen(fen)), fen);
    EXPECT_NO_THROW(validate_position(b, "board"));
  }
}

// Parsing `fen` throws a ParseError whose message contains `needle`.
void expect_rejected(const std::string& fen, const std::string& needle) {
  try {
    parse_fen(fen);
    ADD_FAILURE() << "accepted: " << fen;
  } catch (const ParseError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("invalid checkers FEN"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg << "\nwanted: " << needle;
  }
}

TEST(CheckersFen, Rejections) {
  // Missing sections and extra fields.
  expect_rejected("", "empty");
  expect_rejected("B", "has 1 field(s); expected 3");
  expect_rejected("B:W21,22", "has 2 field(s); expected 3");
  expect_rejected("B:W21:B1:W22", "more than 3 fields");
  // Side to move.
  expect_rejected("X:W21:B1", "field 1 (side to move) is \"X\"; expected B or W");
  expect_rejected(":W21:B1", "field 1 (side to move) is \"\"");
  expect_rejected("b:W21:B1", "field 1 (side to move) is \"b\"");
  // Colour fields.
  expect_rejected("B:W21:W22", "field 3 (White's pieces): White's pieces are given twice");
  expect_rejected("B::B1", "field 2 is empty");
  expect_rejected("B:Q21:B1", "field 2, character 'Q' at offset 2: expected W or B");
  // Squares.
  expect_rejected("B:W21,33:B1", "field 2 (White's pieces): square \"33\" at offset 6 is out of range 1-32");
  expect_rejected("B:W0:B1", "square \"0\" at offset 3 is out of range 1-32");
  expect_rejected("B:W21:B07", "square \"07\" at offset 7 is out of range 1-32");
  expect_rejected("B:W21:B100", "square \"100\" at offset 7 is out of range 1-32");
  expect_rejected("B:W21,x:B1", "field 2 (White's pieces), character 'x' at offset 6: expected a square number");
  expect_rejected("B:W21;22:B1", "character ';' at offset 5: expected ',' or ':' after a square");
  expect_rejected("B:W21,:B1", "nothing after the ',' at offset 5");
  expect_rejected("B:W21,,22:B1", "character ',' at offset 6: expected a square number");
  expect_rejected("B:WK:B1", "a square number is missing at offset 4");
  expect_rejected("B:W21 :B1", "contains white space (a space) at offset 5");
  expect_rejected("B:W21-21:B1", "range \"21-21\" at offset 3 does not go up");
  expect_rejected("B:W25-21:B1", "does not go up");
  // Duplicates, within a side and across the sides.
  expect_rejected("B:W21,22,21:B1", "field 2 (White's pieces): square 21 at offset 9 is listed twice");
  expect_rejected("B:W21,22:B1,K21", "field 3 (Black's pieces): square 21 at offset 12 is listed twice (it is also one of White's)");
  expect_rejected("B:W21-25,23:B1", "square 23 at offset 9 is listed twice");
  // Men on their crowning row.
  expect_rejected("B:W3:B12", "field 2 (White's pieces): square 3 at offset 3: a white man cannot stand on its crowning row (a king is written K3)");
  expect_rejected("B:W21:B30", "field 3 (Black's pieces): square 30 at offset 7: a black man cannot stand on its crowning row");
  // Too many pieces.
  expect_rejected("B:W1-12,K13:B32", "a white man cannot stand");  // 1-4 are White's crowning row
  expect_rejected("B:W9-21:B1", "field 2 (White's pieces): White has more than 12 pieces");
  expect_rejected("B:W25:BK1-13", "field 3 (Black's pieces): Black has more than 12 pieces");
  // A long input is cut in the message.
  try {
    parse_fen("B:W21:B" + std::string(300, '1'));
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u);
  }
}

TEST(CheckersFen, AcceptsWhatItShould) {
  EXPECT_NO_THROW(parse_fen("B:W21:B1"));
  EXPECT_NO_THROW(parse_fen("B:WK1,K2,K3,K4:BK29,K30,K31,K32"));  // kings on any row
  EXPECT_NO_THROW(parse_fen("W:W5-16:B17-28")) << "men may stand anywhere but on their crowning row";
}

TEST(CheckersFen, ValidatePosition) {
  Board b = Board::start();
  EXPECT_NO_THROW(validate_position(b, "board"));
  b.kings = bit(kPdnToSquare[16]);  // empty square
  EXPECT_THROW(validate_position(b, "board"), ParseError);
  b = Board::start();
  b.white |= bit(kPdnToSquare[1]);  // also Black's, and a white man on its crowning row
  EXPECT_THROW(validate_position(b, "board"), ParseError);
  b = Board::start();
  b.white |= bit(kPdnToSquare[16]);  // 13 white pieces
  try {
    validate_position(b, "checkers board");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "invalid checkers board: White has more than 12 pieces");
  }
  b = Board{0, bit(kPdnToSquare[30]), 0, kWhite};
  try {
    validate_position(b, "board");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "invalid board: a black man on 30, its crowning row");
  }
}

}  // namespace
}  // namespace pgmate::checkers
