// The text diagram and the SVG picture.
#include <gtest/gtest.h>

#include "checkers/fen.h"
#include "checkers/notation.h"
#include "checkers/render.h"
#include "checkers/svg.h"

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

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CheckersSvg, PiecesNumbersAndLastMove) {
  const std::string start = board_svg(Board::start());
  EXPECT_EQ(start.rfind("<svg ", 0), 0u);
  EXPECT_EQ(count(start, "class=\"piece white man\""), 12u);
  EXPECT_EQ(count(start, "class=\"piece black man\""), 12u);
  EXPECT_EQ(count(start, "class=\"number\""), 32u);
  EXPECT_EQ(count(start, "class=\"square dark\""), 32u);
  EXPECT_EQ(count(start, "class=\"last-move\""), 0u);
  EXPECT_NE(start.find("<title>" + to_fen(Board::start()) + "</title>"), std::string::npos);

  // A double jump (f2 over e3 and c5 to b6): its start and both landings lit, both
  // captured men marked; a king wears a crown.
  const Board b = parse_fen("W:W27,K32:B23,14");
  const Move jump = parse_move(b, "27x18x9");
  const std::string svg = board_svg(b, &jump);
  EXPECT_EQ(count(svg, "class=\"last-move\""), 3u);
  EXPECT_EQ(count(svg, "class=\"last-capture\""), 2u);
  EXPECT_EQ(count(svg, "class=\"piece white king\""), 1u);
  EXPECT_EQ(count(svg, "class=\"crown\""), 1u);
}

}  // namespace
}  // namespace pgmate::checkers
