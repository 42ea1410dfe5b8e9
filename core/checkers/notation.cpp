#include "checkers/notation.h"

#include <cstdio>
#include <vector>

#include "common/text.h"

namespace pgmate::checkers {

namespace {

std::string quoted(std::string_view s) { return quote_input(s, 80); }

// 'x' for a printable character, "byte 0x07" for any other.
std::string shown_char(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  char shown[16];
  if (c >= 33 && c < 127)
    std::snprintf(shown, sizeof shown, "'%c'", c);
  else
    std::snprintf(shown, sizeof shown, "byte 0x%02x", c);
  return shown;
}

// The moves of `list` written out, "a, b or c" (at most `limit`, then "...").
std::string list_text(const std::vector<Move>& moves, size_t limit = 6) {
  std::string out;
  for (size_t i = 0; i < moves.size() && i < limit; ++i) {
    if (i) out += i + 1 == moves.size() ? " or " : ", ";
    out += to_text(moves[i]);
  }
  if (moves.size() > limit) out += ", ...";
  return out;
}

}  // namespace

std::string to_text(const Move& m) {
  std::string out = square_name(m.from);
  if (!m.is_capture()) return out + '-' + square_name(m.to);
  for (int i = 0; i < m.captures; ++i) out += 'x' + square_name(m.landing(i));
  return out;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::kBlackWins: return "black_wins";
    case Status::kWhiteWins: return "white_wins";
    case Status::kOngoing: break;
  }
  return "ongoing";
}

bool is_legal(const Board& b, const Move& m, CaptureRule rule) {
  MoveList list;
  legal_moves(b, list, rule);
  for (const Move& x : list)
    if (x == m) return true;
  return false;
}

MoveText lex_move(std::string_view original) {
  auto invalid = [&](const std::string& why) {
    return ParseError("invalid checkers move " + quoted(original) + ": " + why);
  };
  std::string_view text = original;
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) throw invalid("empty; expected a move like 11-15 or 15x24");
  const size_t lead = size_t(text.data() - original.data());
  MoveText t;
  char separator = 0;
  for (size_t i = 0;;) {
    const size_t start = i;
    int value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (value < 1000) value = value * 10 + (text[i] - '0');
      ++i;
    }
    const std::string at = " at offset " + std::to_string(lead + start);
    if (i == start) {
      if (i == text.size()) throw invalid("a square number is missing at the end");
      throw invalid("character " + shown_char(text[i]) + at + ": expected a square number 1-32");
    }
    if (value < 1 || value > 32 || text[start] == '0')
      throw invalid("square " + quoted(text.substr(start, i - start)) + at + " is out of range 1-32");
    t.squares.push_back(value);
    if (i == text.size()) break;
    char c = text[i];
    if (c == 'X') c = 'x';
    if (c != '-' && c != 'x')
      throw invalid("character " + shown_char(text[i]) + " at offset " + std::to_string(lead + i) +
                    ": expected '-' (a move) or 'x' (a jump)");
    if (separator && c != separator) throw invalid("mixes '-' and 'x'");
    separator = c;
    ++i;
  }
  if (t.squares.size() < 2) throw invalid("expected at least two squares, like 11-15 or 15x24");
  if (separator == '-' && t.squares.size() > 2)
    throw invalid("a simple move joins two squares; write the landing squares of a jump with 'x' (15x24x31)");
  if (t.squares.size() > size_t(kMaxCaptures) + 1)
    throw invalid("a jump takes at most " + std::to_string(kMaxCaptures) + " pieces");
  t.separator = separator;
  return t;
}

Move move_from_squares(const MoveText& t, std::string_view what) {
  auto invalid = [&](const std::string& why) { return ParseError("invalid " + std::string(what) + ": " + why); };
  const int n = int(t.squares.size());
  if (n < 2 || n > kMaxCaptures + 1 || (t.separator == '-' && n != 2) || (t.separator != '-' && t.separator != 'x'))
    throw invalid("expected a move like 11-15 or 15x24");
  for (int pdn : t.squares)
    if (pdn < 1 || pdn > 32) throw invalid("square " + std::to_string(pdn) + " is out of range 1-32");
  Move m{};
  m.from = kPdnToSquare[t.squares[0]];
  if (t.separator == '-') {
    m.to = kPdnToSquare[t.squares[1]];
    for (int d = 0; d < 4; ++d)
      if ((can_step(d) & bit(m.from)) && neighbour(m.from, d) == m.to) return m;
    throw invalid(std::to_string(t.squares[1]) + " is not a diagonal neighbour of " + std::to_string(t.squares[0]));
  }
  Square at = m.from;
  for (int i = 1; i < n; ++i) {
    const Square target = kPdnToSquare[t.squares[i]];
    int dir = -1;
    for (int d = 0; d < 4 && dir < 0; ++d)
      if ((can_jump(d) & bit(at)) && neighbour(neighbour(at, d), d) == target) dir = d;
    if (dir < 0)
      throw invalid("no jump leads from " + std::to_string(t.squares[i - 1]) + " to " + std::to_string(t.squares[i]) +
                    " (a jump lands two diagonal squares away)");
    const Square over = neighbour(at, dir);
    if (m.captured & bit(over))
      throw invalid("square " + square_name(over) + " is jumped twice");
    m.captured |= bit(over);
    if (i < n - 1) m.path[i - 1] = std::uint8_t(target);
    at = target;
  }
  m.to = std::uint8_t(at);
  m.captures = std::uint8_t(n - 1);
  return m;
}

Move parse_move(const Board& b, std::string_view text, CaptureRule rule) {
  const std::string_view original = text;
  auto illegal = [&](const std::string& why) {
    return IllegalMove("illegal move " + quoted(original) + " in " + to_fen(b) + ": " + why);
  };
  const MoveText lexed = lex_move(text);
  const std::vector<int>& squares = lexed.squares;  // PDN numbers
  const char separator = lexed.separator;

  const Square from = kPdnToSquare[squares.front()], to = kPdnToSquare[squares.back()];
  const Color us = b.side;
  const char* us_name = us == kWhite ? "white" : "black";
  if (!(b.pieces(us) & bit(from))) {
    if (b.pieces(~us) & bit(from))
      throw illegal("the piece on " + std::to_string(squares.front()) + " is " + (us == kWhite ? "Black" : "White") +
                    "'s, and " + (us == kWhite ? "White" : "Black") + " is to move");
    throw illegal("no " + std::string(us_name) + " piece on " + std::to_string(squares.front()));
  }

  MoveList list;
  legal_moves(b, list, rule);
  const bool captures = list.size > 0 && list.moves[0].is_capture();
  std::vector<Move> all(list.begin(), list.end());

  if (separator == '-') {
    for (const Move& m : list)
      if (m.from == from && m.to == to) return m;
    if (captures) throw illegal("a capture is mandatory: " + list_text(all));
    throw illegal("the piece on " + std::to_string(squares.front()) + " cannot move to " +
                  std::to_string(squares.back()));
  }

  // A jump: the full path, or start and end only when that names one sequence.
  if (!captures)
    throw illegal("there is no capture here" +
                  (list.size ? ": the legal moves are " + list_text(all, 8) : std::string(" (no legal moves)")));
  std::vector<Move> ends;  // sequences from `from` to `to`
  for (const Move& m : list) {
    if (m.from != from || m.to != to) continue;
    ends.push_back(m);
    if (m.captures != int(squares.size()) - 1) continue;
    bool same = true;
    for (int i = 0; i < m.captures && same; ++i) same = m.landing(i) == kPdnToSquare[squares[i + 1]];
    if (same) return m;
  }
  if (squares.size() == 2 && ends.size() == 1) return ends.front();
  if (squares.size() == 2 && ends.size() > 1)
    throw illegal("ambiguous: " + std::to_string(ends.size()) + " sequences go from " +
                  std::to_string(squares.front()) + " to " + std::to_string(squares.back()) + " (" +
                  list_text(ends) + "); write every landing square");
  std::vector<Move> ours;
  for (const Move& m : list)
    if (m.from == from) ours.push_back(m);
  if (ours.empty()) throw illegal("the piece on " + std::to_string(squares.front()) + " cannot capture; the captures are " + list_text(all));
  if (ends.empty())
    throw illegal("no " + std::string(rule == CaptureRule::kLongest ? "longest " : "") + "capture sequence from " +
                  std::to_string(squares.front()) + " ends on " + std::to_string(squares.back()) +
                  "; the piece's captures are " + list_text(ours));
  throw illegal("no capture sequence follows that path; from " + std::to_string(squares.front()) + " to " +
                std::to_string(squares.back()) + " the sequences are " + list_text(ends));
}

}  // namespace pgmate::checkers
