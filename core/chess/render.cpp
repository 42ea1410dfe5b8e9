#include "chess/render.h"

#include "chess/fen.h"

namespace pgmate::chess {
namespace {

// UTF-8 glyphs by type (pawn, knight, bishop, rook, queen, king).
const char* const kWhiteGlyphs[6] = {"\u2659", "\u2658", "\u2657", "\u2656", "\u2655", "\u2654"};
const char* const kBlackGlyphs[6] = {"\u265F", "\u265E", "\u265D", "\u265C", "\u265B", "\u265A"};
const char* const kTypeNames[6] = {"pawn", "knight", "bishop", "rook", "queen", "king"};

bool valid_piece(Piece p) { return p != kNoPiece && type_of(p) < kNoPieceType && color_of(p) <= kBlack; }

const char* glyph(Piece p) {
  if (!valid_piece(p)) return "?";
  return color_of(p) == kWhite ? kWhiteGlyphs[type_of(p)] : kBlackGlyphs[type_of(p)];
}

bool side_in_check(const Board& b) {
  return b.pieces(b.side, kKing) != 0 && b.in_check();
}

std::string castling_text(const Board& b) {
  std::string s;
  if (b.castling & kWhiteOO) s += 'K';
  if (b.castling & kWhiteOOO) s += 'Q';
  if (b.castling & kBlackOO) s += 'k';
  if (b.castling & kBlackOOO) s += 'q';
  return s;
}

// ---- SVG geometry ----
constexpr int kSquare = 45;                   // square size
constexpr int kMargin = 20;                   // room for the coordinates, on every side
constexpr int kSize = 8 * kSquare + 2 * kMargin;
// Pieces sit on the alphabetic baseline (dominant-baseline="central" is placed differently
// by different renderers); the chess glyphs of common fonts have almost no descent.
constexpr int kGlyphSize = 38;
constexpr int kGlyphBaseline = 37;  // from the square's top
constexpr const char* kLight = "#f0d9b5";
constexpr const char* kDark = "#b58863";
constexpr const char* kFonts =
    "'DejaVu Sans', 'Noto Sans Symbols 2', 'Segoe UI Symbol', 'Apple Symbols', "
    "'Arial Unicode MS', FreeSerif, sans-serif";

int square_x(Square s) { return kMargin + file_of(s) * kSquare; }
int square_y(Square s) { return kMargin + (7 - rank_of(s)) * kSquare; }

void rect(std::string& out, Square s, const std::string& attrs) {
  out += "<rect x=\"" + std::to_string(square_x(s)) + "\" y=\"" + std::to_string(square_y(s)) +
         "\" width=\"" + std::to_string(kSquare) + "\" height=\"" + std::to_string(kSquare) + "\" " +
         attrs + "/>\n";
}

}  // namespace

std::string board_diagram(const Board& b) {
  std::string out;
  for (int rank = 7; rank >= 0; --rank) {
    out += char('1' + rank);
    for (int file = 0; file < 8; ++file) {
      const Piece p = b.piece_on(make_square(file, rank));
      out += ' ';
      out += p == kNoPiece ? "\u00B7" : glyph(p);
    }
    out += '\n';
  }
  out += "  a b c d e f g h\n";
  out += b.side == kWhite ? "White to move" : "Black to move";
  if (b.castling) out += ", castling " + castling_text(b);
  if (b.ep != kNoSquare) out += ", en passant " + square_name(b.ep);
  if (side_in_check(b)) out += ", check";
  out += '\n';
  return out;
}

std::string board_svg(const Board& b, Move last_move) {
  const std::string size = std::to_string(kSize);
  std::string out;
  out.reserve(16384);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + size + "\" height=\"" + size +
         "\" viewBox=\"0 0 " + size + " " + size + "\" role=\"img\">\n";
  out += "<title>" + to_fen(b) + "</title>\n";
  out +=
      "<defs><radialGradient id=\"pgmate-check\">"
      "<stop offset=\"0%\" stop-color=\"#ff0000\" stop-opacity=\"1\"/>"
      "<stop offset=\"25%\" stop-color=\"#e70000\" stop-opacity=\"1\"/>"
      "<stop offset=\"89%\" stop-color=\"#a90000\" stop-opacity=\"0\"/>"
      "</radialGradient></defs>\n";

  // Squares: a1 is dark.
  for (Square s = 0; s < 64; ++s) {
    const bool dark = (file_of(s) + rank_of(s)) % 2 == 0;
    rect(out, s, std::string("class=\"square ") + (dark ? "dark" : "light") + "\" fill=\"" +
                     (dark ? kDark : kLight) + "\"");
  }

  // Highlights.
  if (!last_move.is_null()) {
    rect(out, last_move.from(), "class=\"last-move\" fill=\"#ffeb3b\" fill-opacity=\"0.45\"");
    rect(out, last_move.to(), "class=\"last-move\" fill=\"#ffeb3b\" fill-opacity=\"0.45\"");
  }
  if (side_in_check(b))
    rect(out, b.king_square(b.side), "class=\"check\" fill=\"url(#pgmate-check)\"");

  // Coordinates: files below the board, ranks on its left.
  const std::string coord_style =
      "font-family=\"" + std::string(kFonts) + "\" font-size=\"13\" fill=\"#555\" text-anchor=\"middle\"";
  for (int i = 0; i < 8; ++i) {
    out += "<text class=\"coord\" x=\"" + std::to_string(kMargin + i * kSquare + kSquare / 2) +
           "\" y=\"" + std::to_string(kMargin + 8 * kSquare + 14) + "\" " + coord_style + ">" +
           char('a' + i) + "</text>\n";
    out += "<text class=\"coord\" x=\"" + std::to_string(kMargin / 2) + "\" y=\"" +
           std::to_string(kMargin + (7 - i) * kSquare + kSquare / 2 + 5) + "\" " + coord_style +
           ">" + char('1' + i) + "</text>\n";
  }

  // Pieces: the solid glyph for both colours; White's filled white with a dark outline.
  for (Square s = 0; s < 64; ++s) {
    const Piece p = b.piece_on(s);
    if (!valid_piece(p)) continue;
    const bool white = color_of(p) == kWhite;
    out += "<text class=\"piece " + std::string(white ? "white " : "black ") + kTypeNames[type_of(p)] +
           "\" x=\"" + std::to_string(square_x(s) + kSquare / 2) + "\" y=\"" +
           std::to_string(square_y(s) + kGlyphBaseline) + "\" font-family=\"" + kFonts +
           "\" font-size=\"" + std::to_string(kGlyphSize) + "\" text-anchor=\"middle\" " +
           (white ? "fill=\"#ffffff\" stroke=\"#000000\" stroke-width=\"1.2\"" : "fill=\"#000000\"") +
           ">" + kBlackGlyphs[type_of(p)] + "\uFE0E</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace pgmate::chess
