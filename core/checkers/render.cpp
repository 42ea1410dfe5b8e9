#include "checkers/render.h"

#include "checkers/movegen.h"

namespace pgmate::checkers {

namespace {

// The internal square at (file, rank), or -1 for a light square.
int square_at(int file, int rank) {
  if ((file + rank) % 2 != 0) return -1;
  return kPdnToSquare[(7 - rank) * 4 + file / 2 + 1];
}

}  // namespace

std::string board_diagram(const Board& b) {
  std::string out;
  for (int rank = 7; rank >= 0; --rank) {
    out += char('1' + rank);
    for (int file = 0; file < 8; ++file) {
      out += ' ';
      const int s = square_at(file, rank);
      if (s < 0) {
        out += ' ';
        continue;
      }
      const Mask m = bit(s);
      const bool king = b.kings & m;
      if (b.white & m)
        out += king ? "\u2654" : "\u25CB";
      else if (b.black & m)
        out += king ? "\u265A" : "\u25CF";
      else
        out += "\u00B7";
    }
    out += '\n';
  }
  out += "  a b c d e f g h\n";
  out += b.side == kWhite ? "White to move" : "Black to move";
  switch (status(b)) {
    case Status::kBlackWins: out += ", Black wins"; break;
    case Status::kWhiteWins: out += ", White wins"; break;
    case Status::kOngoing: break;
  }
  out += '\n';
  return out;
}

std::string square_numbers_diagram() {
  std::string out;
  for (int rank = 7; rank >= 0; --rank) {
    out += char('1' + rank);
    for (int file = 0; file < 8; ++file) {
      const int s = square_at(file, rank);
      if (s < 0) {
        out += "   ";
        continue;
      }
      const int n = kSquareToPdn[s];
      out += n < 10 ? "  " : " ";
      out += std::to_string(n);
    }
    out += '\n';
  }
  out += "   a  b  c  d  e  f  g  h\n";
  return out;
}

}  // namespace pgmate::checkers
