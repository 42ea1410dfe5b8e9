#include "checkers/fen.h"

#include <cstdio>

#include "common/text.h"

namespace pgmate::checkers {

namespace {

std::string quoted(std::string_view s, size_t limit = 120) { return quote_input(s, limit); }

std::string char_desc(char c) {
  if (c >= 33 && c < 127) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

const char* color_name(Color c) { return c == kWhite ? "White" : "Black"; }

struct FenParser {
  std::string_view fen;
  Board b;
  bool seen[2] = {false, false};  // by Color

  [[noreturn]] void fail(const std::string& why) const {
    throw ParseError("invalid checkers FEN " + quoted(fen) + ": " + why);
  }

  static std::string field_name(int field, Color c) {
    return "field " + std::to_string(field) + " (" + color_name(c) + "'s pieces)";
  }

  // A number at fen[i...]; advances i past it. `where` names the field for errors.
  int number(size_t& i, size_t end, const std::string& where) const {
    const size_t start = i;
    int value = 0;
    while (i < end && fen[i] >= '0' && fen[i] <= '9') {
      if (value < 1000) value = value * 10 + (fen[i] - '0');
      ++i;
    }
    if (i == start) {
      if (i == end) fail(where + ": a square number is missing at offset " + std::to_string(i));
      fail(where + ", character " + char_desc(fen[i]) + " at offset " + std::to_string(i) +
           ": expected a square number 1-32 (with 'K' before a king)");
    }
    if (value < 1 || value > 32 || fen[start] == '0')
      fail(where + ": square " + quoted(fen.substr(start, i - start), 8) + " at offset " + std::to_string(start) +
           " is out of range 1-32");
    return value;
  }

  void place(int pdn, bool king, Color c, const std::string& where, size_t at) {
    const Square s = kPdnToSquare[pdn];
    const std::string square = "square " + std::to_string(pdn) + " at offset " + std::to_string(at);
    if (b.occupied() & bit(s)) {
      const Color holder = (b.white & bit(s)) ? kWhite : kBlack;
      fail(where + ": " + square + " is listed twice" +
           (holder == c ? "" : std::string(" (it is also one of ") + color_name(holder) + "'s)"));
    }
    if (!king && (crown_row(c) & bit(s)))
      fail(where + ": " + square + ": a " + (c == kWhite ? "white" : "black") +
           " man cannot stand on its crowning row (a king is written K" + std::to_string(pdn) + ")");
    (c == kWhite ? b.white : b.black) |= bit(s);
    if (king) b.kings |= bit(s);
    if (popcount(b.pieces(c)) > 12) fail(where + ": " + color_name(c) + " has more than 12 pieces");
  }

  // One colour field, fen[begin, end): the colour letter, then comma-separated squares.
  void colour_field(int field, size_t begin, size_t end) {
    const std::string generic = "field " + std::to_string(field);
    if (begin == end) fail(generic + " is empty; expected W or B and that side's squares");
    const char letter = fen[begin];
    if (letter != 'W' && letter != 'B')
      fail(generic + ", character " + char_desc(letter) + " at offset " + std::to_string(begin) +
           ": expected W or B (whose pieces follow)");
    const Color c = letter == 'W' ? kWhite : kBlack;
    const std::string where = field_name(field, c);
    if (seen[c]) fail(where + ": " + color_name(c) + "'s pieces are given twice");
    seen[c] = true;
    size_t i = begin + 1;
    if (i == end) return;  // no pieces
    for (;;) {
      const size_t item = i;
      bool king = false;
      if (fen[i] == 'K') {
        king = true;
        ++i;
      }
      const int first = number(i, end, where);
      int last = first;
      if (i < end && fen[i] == '-') {
        ++i;
        last = number(i, end, where);
        if (last <= first)
          fail(where + ": range " + quoted(fen.substr(item, i - item)) + " at offset " + std::to_string(item) +
               " does not go up");
      }
      for (int n = first; n <= last; ++n) place(n, king, c, where, item);
      if (i == end) return;
      if (fen[i] != ',')
        fail(where + ", character " + char_desc(fen[i]) + " at offset " + std::to_string(i) +
             ": expected ',' or ':' after a square");
      ++i;
      if (i == end) fail(where + ": nothing after the ',' at offset " + std::to_string(i - 1));
    }
  }

  Board parse() {
    for (size_t i = 0; i < fen.size(); ++i) {
      const char c = fen[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        fail("contains white space (" + (c == ' ' ? std::string("a space") : char_desc(c)) + ") at offset " +
             std::to_string(i));
    }
    if (fen.empty()) fail("empty");
    size_t colons[2], count = 0;
    for (size_t i = 0; i < fen.size(); ++i)
      if (fen[i] == ':') {
        if (count == 2) fail("has more than 3 fields (a third ':' at offset " + std::to_string(i) + ")");
        colons[count++] = i;
      }
    if (count < 2)
      fail("has " + std::to_string(count + 1) +
           " field(s); expected 3: the side to move, White's and Black's pieces (B:W21,...:B1,...)");
    const std::string_view side = fen.substr(0, colons[0]);
    if (side == "B")
      b.side = kBlack;
    else if (side == "W")
      b.side = kWhite;
    else
      fail("field 1 (side to move) is " + quoted(side) + "; expected B or W");
    colour_field(2, colons[0] + 1, colons[1]);
    colour_field(3, colons[1] + 1, fen.size());
    return b;
  }
};

}  // namespace

std::string square_name(Square s) { return std::to_string(kSquareToPdn[s & 31]); }

Board parse_fen(std::string_view fen) {
  if (fen == "startpos") return Board::start();
  FenParser p{fen, Board{}};
  return p.parse();
}

std::string to_fen(const Board& b) {
  std::string out = b.side == kWhite ? "W" : "B";
  for (Color c : {kWhite, kBlack}) {
    out += c == kWhite ? ":W" : ":B";
    bool first = true;
    for (int n = 1; n <= 32; ++n) {
      const Mask s = bit(kPdnToSquare[n]);
      if (!(b.pieces(c) & s)) continue;
      if (!first) out += ',';
      first = false;
      if (b.kings & s) out += 'K';
      out += std::to_string(n);
    }
  }
  return out;
}

void validate_position(const Board& b, std::string_view what) {
  auto reject = [&](const std::string& why) { throw ParseError("invalid " + std::string(what) + ": " + why); };
  if (b.side != kWhite && b.side != kBlack) reject("side to move is neither Black nor White");
  if (Mask both = b.white & b.black) reject("square " + square_name(lsb(both)) + " holds both a white and a black piece");
  if (Mask stray = b.kings & ~b.occupied()) reject("king mark on the empty square " + square_name(lsb(stray)));
  for (Color c : {kWhite, kBlack}) {
    if (popcount(b.pieces(c)) > 12) reject(std::string(color_name(c)) + " has more than 12 pieces");
    if (Mask m = b.men(c) & crown_row(c))
      reject(std::string("a ") + (c == kWhite ? "white" : "black") + " man on " + square_name(lsb(m)) +
             ", its crowning row");
  }
}

}  // namespace pgmate::checkers
