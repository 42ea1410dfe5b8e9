#include "checkers/svg.h"

#include <string>

#include "checkers/fen.h"

namespace pgmate::checkers {

namespace {

constexpr int kSquare = 45;
constexpr int kMargin = 20;
constexpr int kSize = 8 * kSquare + 2 * kMargin;
constexpr const char* kLight = "#f0d9b5";
constexpr const char* kDark = "#b58863";
constexpr const char* kFonts = "'DejaVu Sans', Verdana, Arial, sans-serif";

// (file, rank) of an internal square, from its PDN number.
int file_of(Square s) { return pdn_file(kSquareToPdn[s & 31]); }
int rank_of(Square s) { return pdn_rank(kSquareToPdn[s & 31]); }
int x_of(int file) { return kMargin + file * kSquare; }
int y_of(int rank) { return kMargin + (7 - rank) * kSquare; }

void rect(std::string& out, int file, int rank, const std::string& attrs) {
  out += "<rect x=\"" + std::to_string(x_of(file)) + "\" y=\"" + std::to_string(y_of(rank)) + "\" width=\"" +
         std::to_string(kSquare) + "\" height=\"" + std::to_string(kSquare) + "\" " + attrs + "/>\n";
}

void highlight(std::string& out, Square s, const char* attrs) { rect(out, file_of(s), rank_of(s), attrs); }

}  // namespace

std::string board_svg(const Board& b, const Move* last) {
  const std::string size = std::to_string(kSize);
  std::string out;
  out.reserve(16384);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + size + "\" height=\"" + size + "\" viewBox=\"0 0 " +
         size + " " + size + "\" role=\"img\">\n";
  out += "<title>" + to_fen(b) + "</title>\n";

  // Squares: a1 is dark; only dark squares are played on.
  for (int rank = 0; rank < 8; ++rank)
    for (int file = 0; file < 8; ++file) {
      const bool dark = (file + rank) % 2 == 0;
      rect(out, file, rank,
           std::string("class=\"square ") + (dark ? "dark" : "light") + "\" fill=\"" + (dark ? kDark : kLight) + "\"");
    }

  // The last move: start and landing squares, and the squares it jumped.
  if (last) {
    Mask marked = bit(last->from);
    highlight(out, last->from, "class=\"last-move\" fill=\"#ffeb3b\" fill-opacity=\"0.45\"");
    const int landings = last->is_capture() ? last->captures : 1;
    for (int i = 0; i < landings; ++i) {
      const Square s = last->is_capture() ? last->landing(i) : last->to;
      if (marked & bit(s)) continue;
      marked |= bit(s);
      highlight(out, s, "class=\"last-move\" fill=\"#ffeb3b\" fill-opacity=\"0.45\"");
    }
    for (Mask m = last->captured; m;) highlight(out, pop_lsb(m), "class=\"last-capture\" fill=\"#e53935\" fill-opacity=\"0.35\"");
  }

  // Coordinates: files below the board, ranks on its left.
  const std::string coord_style =
      "font-family=\"" + std::string(kFonts) + "\" font-size=\"13\" fill=\"#555\" text-anchor=\"middle\"";
  for (int i = 0; i < 8; ++i) {
    out += "<text class=\"coord\" x=\"" + std::to_string(kMargin + i * kSquare + kSquare / 2) + "\" y=\"" +
           std::to_string(kMargin + 8 * kSquare + 14) + "\" " + coord_style + ">" + char('a' + i) + "</text>\n";
    out += "<text class=\"coord\" x=\"" + std::to_string(kMargin / 2) + "\" y=\"" +
           std::to_string(kMargin + (7 - i) * kSquare + kSquare / 2 + 5) + "\" " + coord_style + ">" + char('1' + i) +
           "</text>\n";
  }

  // Pieces: a disc with an inner ring; a king also wears a crown.
  for (int n = 1; n <= 32; ++n) {
    const Square s = kPdnToSquare[n];
    const Mask m = bit(s);
    if (!(b.occupied() & m)) continue;
    const bool white = (b.white & m) != 0, king = (b.kings & m) != 0;
    const int cx = x_of(pdn_file(n)) + kSquare / 2, cy = y_of(pdn_rank(n)) + kSquare / 2;
    const std::string x = std::to_string(cx), y = std::to_string(cy);
    out += std::string("<g class=\"piece ") + (white ? "white " : "black ") + (king ? "king" : "man") + "\">";
    out += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"16\" fill=\"" + (white ? "#f5f5f0" : "#222222") +
           "\" stroke=\"" + (white ? "#333333" : "#000000") + "\" stroke-width=\"1.5\"/>";
    out += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"11\" fill=\"none\" stroke=\"" +
           (white ? "#b0b0a8" : "#555555") + "\" stroke-width=\"1.5\"/>";
    if (king) {
      auto pt = [&](int dx, int dy) { return std::to_string(cx + dx) + "," + std::to_string(cy + dy); };
      out += "<polygon class=\"crown\" points=\"" + pt(-8, 5) + " " + pt(-8, -5) + " " + pt(-4, 0) + " " + pt(0, -7) +
             " " + pt(4, 0) + " " + pt(8, -5) + " " + pt(8, 5) +
             "\" fill=\"#d4af37\" stroke=\"#7a5c00\" stroke-width=\"0.8\"/>";
    }
    out += "</g>\n";
  }

  // PDN numbers in the corner of the dark squares, above the pieces.
  for (int n = 1; n <= 32; ++n)
    out += "<text class=\"number\" x=\"" + std::to_string(x_of(pdn_file(n)) + 2) + "\" y=\"" +
           std::to_string(y_of(pdn_rank(n)) + 9) + "\" font-family=\"" + kFonts +
           "\" font-size=\"8\" fill=\"#f0d9b5\">" + std::to_string(n) + "</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace pgmate::checkers
