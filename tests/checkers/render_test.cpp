// The text diagram.
#include <gtest/gtest.h>

#include "checkers/fen.h"
#include "checkers/render.h"

namespace pgmate::checkers {
namespace {

TEST(CheckersRender, StartPosition) {
  const std::string want =
      "8   ●   ●   ●   ●\n"
      "7 ●   ●   ●   ●  \n"
      "6   ●   ●   ●   ●\n"
      "5 ·   ·   ·   ·  \n"
      "4   ·   ·   ·   ·\n"
      "3 ○   ○   ○   ○  \n"
      "2   ○   ○   ○   ○\n"
      "1 ○   ○   ○   ○  \n"
      "  a b c d e f g h\n"
      "Black to move\n";
  EXPECT_EQ(board_diagram(Board::start()), want);
}

TEST(CheckersRender, KingsAndResult) {
  const std::string want =
      "8   ♔   ·   ·   ·\n"
      "7 ·   ·   ·   ·  \n"
      "6   ·   ·   ·   ·\n"
      "5 ·   ·   ·   ·  \n"
      "4   ·   ·   ·   ·\n"
      "3 ·   ·   ·   ·  \n"
      "2   ·   ·   ·   ·\n"
      "1 ·   ·   ♚   ·  \n"
      "  a b c d e f g h\n"
      "White to move\n";
  EXPECT_EQ(board_diagram(parse_fen("W:WK1:BK31")), want);
  const std::string over = board_diagram(parse_fen("B:W21:B"));
  EXPECT_NE(over.find("Black to move, White wins\n"), std::string::npos) << over;
}

TEST(CheckersRender, SquareNumbers) {
  const std::string key = square_numbers_diagram();
  EXPECT_EQ(key.substr(0, key.find('\n')), "8     1     2     3     4");
  EXPECT_NE(key.find("1 29    30    31    32   \n"), std::string::npos) << key;
}

}  // namespace
}  // namespace pgmate::checkers
