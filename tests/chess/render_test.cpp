// Text diagrams and SVG pictures of positions.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "chess/fen.h"
#include "chess/notation.h"
#include "chess/render.h"

#ifndef PGMATE_TEST_DATA_DIR
#error "PGMATE_TEST_DATA_DIR must name the tests/data directory"
#endif

namespace pgmate::chess {
namespace {

int count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(Render, DiagramStartPosition) {
  const std::string want =
      "8 ♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜\n"
      "7 ♟ ♟ ♟ ♟ ♟ ♟ ♟ ♟\n"
      "6 · · · · · · · ·\n"
      "5 · · · · · · · ·\n"
      "4 · · · · · · · ·\n"
      "3 · · · · · · · ·\n"
      "2 ♙ ♙ ♙ ♙ ♙ ♙ ♙ ♙\n"
      "1 ♖ ♘ ♗ ♕ ♔ ♗ ♘ ♖\n"
      "  a b c d e f g h\n"
      "White to move, castling KQkq\n";
  EXPECT_EQ(board_diagram(parse_fen(kStartFen)), want);
}

TEST(Render, DiagramBlackToMove) {
  // 1. e4: no black pawn can take en passant, so no en-passant square is kept.
  const std::string want =
      "8 ♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜\n"
      "7 ♟ ♟ ♟ ♟ ♟ ♟ ♟ ♟\n"
      "6 · · · · · · · ·\n"
      "5 · · · · · · · ·\n"
      "4 · · · · ♙ · · ·\n"
      "3 · · · · · · · ·\n"
      "2 ♙ ♙ ♙ ♙ · ♙ ♙ ♙\n"
      "1 ♖ ♘ ♗ ♕ ♔ ♗ ♘ ♖\n"
      "  a b c d e f g h\n"
      "Black to move, castling KQkq\n";
  EXPECT_EQ(board_diagram(parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")), want);
}

TEST(Render, DiagramStateLine) {
  const std::string ep = board_diagram(parse_fen("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3"));
  EXPECT_TRUE(ends_with(ep, "\nBlack to move, castling KQkq, en passant e3\n")) << ep;
  const std::string check = board_diagram(parse_fen("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1"));
  EXPECT_TRUE(ends_with(check, "\n  a b c d e f g h\nWhite to move, check\n")) << check;
  const std::string some = board_diagram(parse_fen("r3k3/8/8/8/8/8/8/4K2R b Kq - 0 1"));
  EXPECT_TRUE(ends_with(some, "\nBlack to move, castling Kq\n")) << some;
}

TEST(Render, SvgStartPosition) {
  const std::string svg = board_svg(parse_fen(kStartFen));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(ends_with(svg, "</svg>\n"));
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 400 400\""), std::string::npos);
  EXPECT_NE(svg.find("width=\"400\""), std::string::npos);
  EXPECT_NE(svg.find("height=\"400\""), std::string::npos);
  EXPECT_EQ(count(svg, "<rect"), 64);
  EXPECT_EQ(count(svg, "class=\"square light\""), 32);
  EXPECT_EQ(count(svg, "class=\"square dark\""), 32);
  EXPECT_EQ(count(svg, "<text class=\"piece"), 32);
  EXPECT_EQ(count(svg, "<text class=\"piece white"), 16);
  EXPECT_EQ(count(svg, "<text class=\"piece black"), 16);
  EXPECT_EQ(count(svg, "<text class=\"coord\""), 16);
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "last-move"), 0);
  EXPECT_EQ(count(svg, "class=\"check\""), 0);
  // Self-contained: no external references.
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_EQ(svg.find("@import"), std::string::npos);
  EXPECT_EQ(svg.find("<image"), std::string::npos);
}

TEST(Render, SvgLastMoveHighlight) {
  const Board start = parse_fen(kStartFen);
  const Move e4 = parse_uci(start, "e2e4");
  Board after = start;
  after.play(e4);
  const std::string svg = board_svg(after, e4);
  EXPECT_EQ(count(svg, "<rect"), 66);
  EXPECT_EQ(count(svg, "class=\"last-move\""), 2);
  // e2 is x=20+4*45=200, y=20+6*45=290; e4 is y=20+4*45=200.
  EXPECT_NE(svg.find("<rect x=\"200\" y=\"290\" width=\"45\" height=\"45\" class=\"last-move\""),
            std::string::npos);
  EXPECT_NE(svg.find("<rect x=\"200\" y=\"200\" width=\"45\" height=\"45\" class=\"last-move\""),
            std::string::npos);
  EXPECT_EQ(count(board_svg(after), "last-move"), 0);
  EXPECT_EQ(count(board_svg(after, Move()), "<rect"), 64);
}

TEST(Render, SvgCheckHighlight) {
  const Board b = parse_fen("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1");
  const std::string svg = board_svg(b, parse_uci_syntax("e7e2"));
  EXPECT_EQ(count(svg, "<rect"), 64 + 2 + 1);
  EXPECT_EQ(count(svg, "class=\"check\""), 1);
  // Under the white king on e1: x=200, y=20+7*45=335.
  EXPECT_NE(svg.find("<rect x=\"200\" y=\"335\" width=\"45\" height=\"45\" class=\"check\""),
            std::string::npos);
  EXPECT_EQ(count(svg, "<text class=\"piece"), 3);
}

TEST(Render, EveryPerftSuitePosition) {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  ASSERT_TRUE(in) << "cannot open perftsuite.epd";
  int positions = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const std::string fen = line.substr(0, line.find(';'));
    const Board b = parse_fen(fen);
    std::string diagram, svg;
    ASSERT_NO_THROW(diagram = board_diagram(b)) << fen;
    ASSERT_NO_THROW(svg = board_svg(b)) << fen;
    EXPECT_EQ(count(diagram, "\n"), 10) << fen;
    EXPECT_EQ(svg.rfind("<svg", 0), 0u) << fen;
    EXPECT_TRUE(ends_with(svg, "</svg>\n")) << fen;
    EXPECT_EQ(count(svg, "<text class=\"piece"), popcount(b.occupied())) << fen;
    EXPECT_EQ(count(svg, "<rect"), 64 + (b.in_check() ? 1 : 0)) << fen;
    EXPECT_NE(svg.find("<title>" + to_fen(b) + "</title>"), std::string::npos) << fen;
    ++positions;
  }
  EXPECT_GT(positions, 100);
}

}  // namespace
}  // namespace pgmate::chess
