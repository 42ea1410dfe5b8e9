// PGN reader and writer.
//
// The reader is a lexer feeding a token-level state machine, so input may be cut anywhere
// and nothing is ever scanned twice. A token that lies whole in the input is handed on in
// place; one cut by the end of a chunk goes byte by byte into a small capped buffer.
// Comments are skipped with memchr as they stream past. Moves are resolved by parse_san,
// which looks only at the pieces that reach the destination square.
#include "chess/pgn.h"

#include "common/encoding.h"
#include "common/json.h"
#include "common/text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <stdexcept>

#include "chess/notation.h"

namespace pgmate::chess {

namespace {

constexpr size_t kMaxSymbol = 255;       // longest move / tag name / result token
constexpr size_t kMaxTagValue = 1 << 16; // longest tag value
constexpr size_t kMaxComment = 1024;     // the part of a comment searched for [%eval] and [%clk]
constexpr size_t kMaxReadings = 8;       // readings of ambiguous moves followed at once
constexpr size_t kLineWidth = 79;        // export format: lines of at most 79 characters
constexpr std::string_view kBom = "\xEF\xBB\xBF";

const Board& standard_start() {
  static const Board b = parse_fen(kStartFen);
  return b;
}

bool is_result(std::string_view s) { return s == "1-0" || s == "0-1" || s == "1/2-1/2" || s == "*"; }

// The result a movetext token or Result tag value stands for ("1/2" is a draw too), or "".
std::string_view result_of(std::string_view s) {
  if (s.size() == 3) {
    if (s == "1-0") return "1-0";
    if (s == "0-1") return "0-1";
    if (s == "1/2") return "1/2-1/2";
  } else if (s == "1/2-1/2") {
    return "1/2-1/2";
  } else if (s == "*") {
    return "*";
  }
  return {};
}

// The result a move token ends with ("Qxf7#1-0", "e41/2-1/2", "R8xg20-1"), or "".
std::string_view glued_result(std::string_view s) {
  // Every result ends with '-' or '/' and a digit: most moves are ruled out at once.
  if (s.size() < 4 || (s[s.size() - 2] != '-' && s[s.size() - 2] != '/')) return {};
  for (const std::string_view r : {"1/2-1/2", "1-0", "0-1", "1/2"}) {
    if (s.size() <= r.size() || !s.ends_with(r)) continue;
    const std::string_view move = s.substr(0, s.size() - r.size());
    if (move.back() == '-' || move.back() == '/' ||
        move.find_first_not_of("0123456789") == std::string_view::npos)
      return {};
    return r;
  }
  return {};
}

// The ways PGN writers spell a null move (passing the turn).
bool is_null_move(std::string_view s) {
  // The first character first: a move's text rarely starts like a null move.
  if (s.empty() || (s[0] != '-' && s[0] != 'Z' && s[0] != '0' && s[0] != '@')) return false;
  return s.size() <= 4 && (s == "--" || s == "Z0" || s == "0000" || s == "@@@@");
}

// Evaluation signs written as text ("+-" for $18 and so on); read past like NAGs.
bool is_evaluation_sign(std::string_view s) {
  for (const std::string_view e : {"=", "+=", "=+", "+/=", "=/+", "+/-", "-/+", "+-", "-+"})
    if (s == e) return true;
  return false;
}

// Character classes of the lexer.
enum : std::uint8_t {
  kAlnum = 1,       // starts a symbol
  kSymbolChar = 2,  // continues a symbol
  kPunctStart = 4,  // starts a punctuation token
  kPunctChar = 8,   // continues one
};
constexpr auto kCharClass = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum) t[c] |= kAlnum | kSymbolChar;
    if (c == '_' || c == '+' || c == '#' || c == '=' || c == ':' || c == '-' || c == '/') t[c] |= kSymbolChar;
    // "--", "@@@@", a detached '+' or '#', "+-", and "½-½" in UTF-8 (C2 BD) or Latin-1 (BD).
    if (c == '-' || c == '+' || c == '#' || c == '=' || c == '@' || c == 0xC2 || c == 0xBD)
      t[c] |= kPunctStart | kPunctChar;
    if (c == '/') t[c] |= kPunctChar;
  }
  return t;
}();

bool is_alnum(char c) { return kCharClass[static_cast<unsigned char>(c)] & kAlnum; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_symbol_char(char c) { return kCharClass[static_cast<unsigned char>(c)] & kSymbolChar; }

std::string quoted(std::string_view s) { return quote_input(s, 60); }

// "?" (or "????.??.??" for Date) in a Seven Tag Roster tag: the standard's "unknown".
bool is_unknown_roster_value(std::string_view name, std::string_view value) {
  if (name == "Date") return value == "????.??.??";
  return value == "?" && (name == "Event" || name == "Site" || name == "Round" || name == "White" || name == "Black");
}

std::string char_desc(char c) {
  if (c >= 33 && c < 127) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

const std::string* PgnGame::tag(std::string_view name) const {
  for (const auto& [k, v] : tags)
    if (k == name) return &v;
  return nullptr;
}

namespace detail {

enum class Tok {
  kSymbol,      // move, move number, result other than '*', tag name
  kString,      // tag value, unescaped
  kNag,         // $14 (text: the digits)
  kLBracket,
  kRBracket,
  kLParen,
  kRParen,
  kPeriod,
  kStar,
  kAnnotation,  // '!' or '?', a detached check sign, an evaluation sign such as "+-"
  kBlankLine,   // a line holding only white space
  kInvalid,     // text: what is wrong
};

struct Token {
  Tok type;
  std::string_view text;
  int line;
};

long TagNames::find(const PgnTags& tags, std::string_view name) {
  if (size_ <= kScanned) {
    for (std::size_t i = 0; i < size_; ++i) {
      ++work_;
      if (tags[i].first == name) return long(i);
    }
    return -1;
  }
  ++work_;
  const auto at = index_.find(name);
  return at == index_.end() ? -1 : long(at->second);
}

void TagNames::add(const PgnTags& tags) {
  ++size_;
  if (size_ <= kScanned) return;
  for (std::size_t i = index_.empty() ? 0 : size_ - 1; i < size_; ++i) {
    ++work_;
    index_.emplace(tags[i].first, i);
  }
}

class PgnParser {
 public:
  PgnParser(PgnErrorMode mode, std::function<void()> poll = {}) : mode_(mode), poll_(std::move(poll)) {}

  // Reads data[pos..] until a game is complete; false when data is used up (and, when
  // `finished`, the end of input has been dealt with). Throws PgnError in kFail mode.
  bool next(std::string_view data, size_t& pos, bool finished, PgnGame& out);

  int skipped() const { return skipped_; }
  const std::string& last_error() const { return last_error_; }

 private:
  // kStringQuote: a '"' inside a tag value, which closes the value only if what follows
  // it on its line is ']' or the line end (blanks between allowed), or blanks and another
  // '"' (which opens a second string: an error, as "x" "y" always was).
  // kPunct: a token of punctuation (null move "--", "@@@@", a detached "+", "½-½").
  enum class Lex { kNormal, kBrace, kLineComment, kString, kStringQuote, kSymbol, kNag, kPunct };
  enum class State { kBetween, kTags, kMoves, kSkip };
  enum class TagStep { kOpen, kName, kValue, kClose };  // what the tag section expects next

  // ---- lexer
  void lex_span(const char* p, size_t& pos, size_t n);
  bool lex(char c);
  void lex_string(char c);
  void lex_normal(char c);
  void emit(Tok type, std::string_view text) { on_token(Token{type, text, token_line_}); }
  void emit_punct(std::string_view text);
  void append_capped(std::string& s, char c, size_t cap) {
    if (s.size() < cap)
      s.push_back(c);
    else
      overflow_ = true;
  }
  bool ep_dot(std::string_view symbol) const;
  void end_of_input();

  // ---- parser
  void on_token(const Token& t);
  void between(const Token& t);
  void in_tags(const Token& t);
  void in_moves(const Token& t);
  void skipping(const Token& t);
  void play_san(std::string_view san, int line);
  void end_comment();
  bool ambiguity_settled(int line);
  void begin_game();
  bool setup_start(int line);
  void end_game(std::string_view result);
  void end_game_with(const Token& result);
  void fail(const std::string& where, const std::string& what, int line);
  std::string move_context(std::string_view san = {}) const;
  std::string tag_result() const;

  PgnErrorMode mode_;
  std::function<void()> poll_;
  static constexpr int kTokensPerPoll = 4096;
  int tokens_until_poll_ = kTokensPerPoll;

  // Lexer state.
  Lex lex_ = Lex::kNormal;
  int line_ = 1;
  int token_line_ = 1;
  int comment_line_ = 1;
  bool at_line_start_ = true;
  bool line_has_content_ = false;
  bool escape_ = false;
  bool overflow_ = false;
  bool tag_quotes_ = false;  // the string being read is a tag value (inner quotes allowed)
  std::string text_;         // symbol, NAG digits or tag value being read
  std::string quote_blanks_; // kStringQuote: the blanks read after the quote
  bool bom_checked_ = false;
  bool ended_ = false;

  // Parser state.
  State state_ = State::kBetween;
  TagStep tag_step_ = TagStep::kOpen;
  std::string tag_name_, tag_value_;
  TagNames tag_names_;  // of game_.tags
  int fen_line_ = 0;
  PgnGame game_;
  Board board_{};
  // The other readings of the game while an ambiguous SAN move is open: each the board and
  // moves it would give. Moves that are illegal in a reading end it; the game is good when
  // exactly one reading (board_ and game_.moves, or one of these) lasts to its end.
  struct Reading {
    Board board;
    std::vector<Move> moves;
  };
  std::vector<Reading> readings_;
  // The ambiguous moves met so far: what the game says ("move 12. Nd2") and their index.
  std::vector<std::pair<std::string, std::size_t>> ambiguous_;
  bool capture_comment_ = false;
  std::string comment_;
  int depth_ = 0;           // variation nesting
  bool skip_blank_ = false; // a blank line was seen while skipping a bad game
  int games_ = 0;
  std::deque<PgnGame> ready_;

  // Errors.
  int skipped_ = 0;
  std::string last_error_;
  int error_game_ = 0, error_line_ = 0;
  bool throw_pending_ = false;
};

bool PgnParser::next(std::string_view data, size_t& pos, bool finished, PgnGame& out) {
  for (;;) {
    if (!ready_.empty()) {
      out = std::move(ready_.front());
      ready_.pop_front();
      return true;
    }
    if (throw_pending_) {
      throw_pending_ = false;
      throw PgnError(last_error_, error_game_, error_line_);
    }
    if (!bom_checked_) {
      std::string_view rest = data.substr(pos);
      if (rest.size() < kBom.size() && !finished && kBom.substr(0, rest.size()) == rest) return false;
      if (rest.substr(0, kBom.size()) == kBom) pos += kBom.size();
      bom_checked_ = true;
    }
    if (pos < data.size()) {
      lex_span(data.data(), pos, data.size());
      continue;
    }
    if (finished && !ended_) {
      ended_ = true;
      end_of_input();
      continue;
    }
    return false;
  }
}

// ---------------------------------------------------------------- lexer

// Lexes p[pos..n) until it is used up, a game is complete or a bad game must be reported.
// Tokens that lie whole in the data are read in place (no copy); one cut by the end of the
// data, and the rarer forms, go byte by byte through lex(), which keeps the partial token.
void PgnParser::lex_span(const char* p, size_t& pos, size_t n) {
  while (pos < n && ready_.empty() && !throw_pending_) {
    const char c = p[pos];
    if (lex_ == Lex::kNormal) {
      if (c == ' ') {
        at_line_start_ = false;
        ++pos;
        continue;
      }
      // In the movetext a period, and the end of a line that had something on it, are
      // tokens the parser reads past: skipped here, without making them tokens (a blank
      // line still goes through lex_normal).
      if (state_ == State::kMoves && (c == '.' || (c == '\n' && line_has_content_))) {
        if (c == '.') {
          at_line_start_ = false;
          line_has_content_ = true;
        } else {
          at_line_start_ = true;
          line_has_content_ = false;
          ++line_;
        }
        ++pos;
        continue;
      }
      // A move number with its periods ("12.", "12..."): read past here, as the parser would
      // ("0000." stays a symbol: a null move).
      if (state_ == State::kMoves && is_digit(c)) {
        size_t end = pos + 1;
        while (end < n && is_digit(p[end])) ++end;
        if (end < n && p[end] == '.' && std::string_view(p + pos, end - pos) != "0000") {
          while (end < n && p[end] == '.') ++end;
          at_line_start_ = false;
          line_has_content_ = true;
          pos = end;
          continue;
        }
      }
      if (kCharClass[static_cast<unsigned char>(c)] & kAlnum) {
        size_t end = pos + 1;
        while (end < n) {
          const char d = p[end];
          if ((kCharClass[static_cast<unsigned char>(d)] & kSymbolChar) ||
              (d == '.' && ep_dot(std::string_view(p + pos, end - pos))))
            ++end;
          else
            break;
        }
        if (end < n) {  // the whole symbol is here
          at_line_start_ = false;
          line_has_content_ = true;
          token_line_ = line_;
          const std::string_view symbol(p + pos, end - pos);
          pos = end;
          if (symbol.size() > kMaxSymbol)
            emit(Tok::kInvalid, "token longer than " + std::to_string(kMaxSymbol) +
                                    " characters: " + quoted(symbol.substr(0, kMaxSymbol)));
          else
            emit(Tok::kSymbol, symbol);
          continue;
        }
      } else if (c == '"') {
        // A whole string without escapes or line ends; a tag value must be followed by ']'.
        const bool in_tag = state_ == State::kTags && tag_step_ == TagStep::kValue;
        size_t end = pos + 1;
        while (end < n && p[end] != '"' && p[end] != '\\' && p[end] != '\n') ++end;
        if (end + 1 < n && p[end] == '"' && (!in_tag || p[end + 1] == ']') && end - pos - 1 <= kMaxTagValue) {
          at_line_start_ = false;
          line_has_content_ = true;
          token_line_ = line_;
          const std::string_view value(p + pos + 1, end - pos - 1);
          pos = end + 1;
          emit(Tok::kString, value);
          continue;
        }
      }
    } else if (lex_ == Lex::kBrace) {
      const void* close = std::memchr(p + pos, '}', n - pos);
      const size_t end = close ? static_cast<const char*>(close) - p : n;
      line_ += int(std::count(p + pos, p + end, '\n'));
      if (capture_comment_) comment_.append(p + pos, std::min(end - pos, kMaxComment - std::min(kMaxComment, comment_.size())));
      if (close) {
        lex_ = Lex::kNormal;
        pos = end + 1;
        if (capture_comment_) end_comment();
      } else {
        pos = end;
      }
      continue;
    } else if (lex_ == Lex::kLineComment) {
      const void* nl = std::memchr(p + pos, '\n', n - pos);
      if (!nl) {
        pos = n;
        continue;
      }
      pos = static_cast<const char*>(nl) - p;
      if (lex('\n')) ++pos;  // ends the comment
      continue;
    }
    if (lex(c)) ++pos;
  }
}

// '.' belongs to a move only in "e.p." (en passant marker, alone or glued).
bool PgnParser::ep_dot(std::string_view s) const {
  return !is_digit(s[0]) && (s.ends_with('e') || s.ends_with("e.p")) &&
         !(state_ == State::kTags && tag_step_ == TagStep::kName);
}

// Reads one byte; false when it is left unread: a token it ended made a game complete or
// a game bad, and the byte is read again (as the start of what follows) once that game is
// handed out. Two bad games are then never found in one call, so none goes unreported.
bool PgnParser::lex(char c) {
  const auto stop = [&] { return throw_pending_ || !ready_.empty(); };
  switch (lex_) {
    case Lex::kNormal:
      lex_normal(c);
      break;
    case Lex::kBrace:
      if (c == '}') {
        lex_ = Lex::kNormal;
        if (capture_comment_) end_comment();
      } else if (capture_comment_ && comment_.size() < kMaxComment) {
        comment_.push_back(c);
      }
      break;
    case Lex::kLineComment:
      if (c == '\n') {
        lex_ = Lex::kNormal;
        lex_normal(c);
      }
      break;
    case Lex::kString:
      if (c == '\n') {
        lex_ = Lex::kNormal;
        emit(Tok::kInvalid, "unterminated tag value (a quoted string ends on its line)");
        if (stop()) return false;
        lex_normal(c);
      } else {
        lex_string(c);
      }
      break;
    case Lex::kStringQuote:
      if (c == ' ' || c == '\t' || c == '\r') {
        append_capped(quote_blanks_, c, kMaxTagValue);
      } else if (c == '"' && quote_blanks_.empty()) {
        // Two quotes in a row: the first is inside the value, the second may close it.
        append_capped(text_, '"', kMaxTagValue);
      } else if (c == ']' || c == '\n' || c == '"') {
        // The quote closed the value (a '"' after blanks opens another string).
        lex_ = Lex::kNormal;
        if (overflow_)
          emit(Tok::kInvalid, "tag value longer than " + std::to_string(kMaxTagValue) + " bytes");
        else
          emit(Tok::kString, text_);
        if (stop()) return false;
        lex_normal(c);
      } else {
        // A quote inside the value, kept as written.
        append_capped(text_, '"', kMaxTagValue);
        for (char b : quote_blanks_) append_capped(text_, b, kMaxTagValue);
        lex_ = Lex::kString;
        lex_string(c);
      }
      break;
    case Lex::kSymbol: {
      if ((kCharClass[static_cast<unsigned char>(c)] & kSymbolChar) || (c == '.' && ep_dot(text_))) {
        append_capped(text_, c, kMaxSymbol);
        break;
      }
      lex_ = Lex::kNormal;
      if (overflow_)
        emit(Tok::kInvalid, "token longer than " + std::to_string(kMaxSymbol) + " characters: " + quoted(text_));
      else
        emit(Tok::kSymbol, text_);
      if (stop()) return false;
      lex_normal(c);
      break;
    }
    case Lex::kPunct:
      if (kCharClass[static_cast<unsigned char>(c)] & kPunctChar) {
        append_capped(text_, c, kMaxSymbol);
        break;
      }
      lex_ = Lex::kNormal;
      emit_punct(text_);
      if (stop()) return false;
      lex_normal(c);
      break;
    case Lex::kNag:
      if (is_digit(c)) {
        append_capped(text_, c, 8);
        break;
      }
      lex_ = Lex::kNormal;
      if (text_.empty() || overflow_)
        emit(Tok::kInvalid, "'$' must be followed by a NAG number (1 to 8 digits)");
      else
        emit(Tok::kNag, text_);
      if (stop()) return false;
      lex_normal(c);
      break;
  }
  if (c == '\n') ++line_;
  return true;
}

void PgnParser::lex_string(char c) {
  if (escape_) {
    // PGN escapes only \" and \\; any other backslash is kept as written.
    if (c != '"' && c != '\\') append_capped(text_, '\\', kMaxTagValue);
    append_capped(text_, c, kMaxTagValue);
    escape_ = false;
  } else if (c == '\\') {
    escape_ = true;
  } else if (c == '"') {
    if (tag_quotes_) {  // closing, or a quote inside the value: what follows tells
      lex_ = Lex::kStringQuote;
      quote_blanks_.clear();
      return;
    }
    lex_ = Lex::kNormal;
    if (overflow_)
      emit(Tok::kInvalid, "tag value longer than " + std::to_string(kMaxTagValue) + " bytes");
    else
      emit(Tok::kString, text_);
  } else {
    append_capped(text_, c, kMaxTagValue);
  }
}

void PgnParser::lex_normal(char c) {
  const bool first_column = at_line_start_;
  at_line_start_ = false;
  switch (c) {
    case '\n':
      token_line_ = line_;
      if (!line_has_content_) emit(Tok::kBlankLine, {});
      line_has_content_ = false;
      at_line_start_ = true;
      return;
    case ' ': case '\t': case '\r': case '\v': case '\f':
      return;
    default:
      break;
  }
  line_has_content_ = true;
  token_line_ = line_;
  switch (c) {
    case '{':
      lex_ = Lex::kBrace;
      comment_line_ = line_;
      // Only the main line's comments after a move can hold its evaluation and clock.
      capture_comment_ = state_ == State::kMoves && depth_ == 0 && !game_.moves.empty();
      comment_.clear();
      return;
    case ';': lex_ = Lex::kLineComment; return;
    case '"':
      lex_ = Lex::kString;
      text_.clear();
      escape_ = false;
      overflow_ = false;
      tag_quotes_ = state_ == State::kTags && tag_step_ == TagStep::kValue;
      return;
    case '$': lex_ = Lex::kNag; text_.clear(); overflow_ = false; return;
    case '[': emit(Tok::kLBracket, "["); return;
    case ']': emit(Tok::kRBracket, "]"); return;
    case '(': emit(Tok::kLParen, "("); return;
    case ')': emit(Tok::kRParen, ")"); return;
    case '.': emit(Tok::kPeriod, "."); return;
    case '*': emit(Tok::kStar, "*"); return;
    case '!': case '?': emit(Tok::kAnnotation, std::string_view(&c, 1)); return;
    case ',': case '}':  // stray: read past
      return;
    case '%':
      if (first_column) {  // escape mechanism: the whole line is ignored
        lex_ = Lex::kLineComment;
        return;
      }
      break;
    default:
      if (kCharClass[static_cast<unsigned char>(c)] & kAlnum) {
        lex_ = Lex::kSymbol;
        text_.assign(1, c);
        overflow_ = false;
        return;
      }
      if (kCharClass[static_cast<unsigned char>(c)] & kPunctStart) {
        lex_ = Lex::kPunct;
        text_.assign(1, c);
        overflow_ = false;
        return;
      }
      break;
  }
  emit(Tok::kInvalid, "unexpected character " + char_desc(c));
}

// A token of punctuation: a null move, a half-point result, a check sign or evaluation
// written apart from its move, or else an error on its first character.
void PgnParser::emit_punct(std::string_view text) {
  if (text == "--" || text == "@@@@") return emit(Tok::kSymbol, text);
  if (text == "\xC2\xBD-\xC2\xBD" || text == "\xBD-\xBD") return emit(Tok::kSymbol, "1/2-1/2");
  if (text.find_first_not_of("+#") == std::string_view::npos || is_evaluation_sign(text))
    return emit(Tok::kAnnotation, text);
  emit(Tok::kInvalid, "unexpected character " + char_desc(text[0]));
}

void PgnParser::end_of_input() {
  token_line_ = line_;
  switch (lex_) {
    case Lex::kSymbol:
    case Lex::kNag:
    case Lex::kPunct:
    case Lex::kStringQuote:
      lex('\n');  // a line end completes the pending token
      break;
    case Lex::kString:
      emit(Tok::kInvalid, "unterminated tag value at end of input");
      break;
    case Lex::kBrace:
      if (state_ == State::kTags || state_ == State::kMoves)
        fail(state_ == State::kTags ? "tags" : move_context(), "comment '{' opened here is not closed by '}'",
             comment_line_);
      break;
    default:
      break;
  }
  lex_ = Lex::kNormal;
  token_line_ = line_;
  if (state_ == State::kTags) {
    if (tag_step_ != TagStep::kOpen)
      fail("tags", "unterminated tag pair at end of input", line_);
    else if (setup_start(line_))
      end_game(tag_result());
  } else if (state_ == State::kMoves) {
    if (depth_ > 0)
      fail(move_context(), "unterminated variation '(' at end of input", line_);
    else
      end_game(tag_result());
  }
}

// ---------------------------------------------------------------- parser

namespace {
bool is_result_token(const Token& t) {
  return t.type == Tok::kStar || (t.type == Tok::kSymbol && !result_of(t.text).empty());
}

// A [%clk] value in seconds: H:MM:SS or H:MM:SS.F, digits only, minutes and seconds of one
// or two digits below 60, nothing after. Hours are at most 99,999 (11 years, beyond any
// clock): far inside what double seconds hold to the microsecond, and the microseconds of
// a PostgreSQL interval, so a clock is kept exactly or not at all.
std::optional<double> clock_seconds(std::string_view t) {
  constexpr long kMaxHours = 99999;
  std::size_t i = 0;
  long hours = 0;
  for (; i < t.size() && is_digit(t[i]); ++i)
    if ((hours = hours * 10 + (t[i] - '0')) > kMaxHours) return std::nullopt;
  if (i == 0 || i == t.size() || t[i++] != ':') return std::nullopt;
  const auto sixty = [&](int& value) {
    const std::size_t begin = i;
    value = 0;
    while (i < t.size() && i - begin < 2 && is_digit(t[i])) value = value * 10 + (t[i++] - '0');
    return i > begin && value < 60;
  };
  int minutes = 0, seconds = 0;
  if (!sixty(minutes) || i == t.size() || t[i++] != ':') return std::nullopt;
  const std::size_t seconds_at = i;
  if (!sixty(seconds)) return std::nullopt;
  double with_fraction = seconds;
  if (i < t.size() && t[i] == '.') {
    const std::size_t fraction_at = ++i;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i == fraction_at) return std::nullopt;
    std::from_chars(t.data() + seconds_at, t.data() + i, with_fraction, std::chars_format::fixed);
  }
  if (i != t.size()) return std::nullopt;
  return double(hours) * 3600.0 + minutes * 60.0 + with_fraction;
}
}  // namespace

void PgnParser::on_token(const Token& t) {
  if (poll_ && --tokens_until_poll_ == 0) {
    tokens_until_poll_ = kTokensPerPoll;
    poll_();
  }
  switch (state_) {
    case State::kBetween: between(t); break;
    case State::kTags: in_tags(t); break;
    case State::kMoves: in_moves(t); break;
    case State::kSkip: skipping(t); break;
  }
}

void PgnParser::begin_game() {
  game_ = PgnGame();
  game_.start = standard_start();
  game_.number = ++games_;
  game_.moves.reserve(128);
  game_.tags.reserve(16);  // the Seven Tag Roster and some more, without regrowing
  tag_names_.clear();
  depth_ = 0;
  fen_line_ = 0;
  readings_.clear();
  ambiguous_.clear();
  capture_comment_ = false;
}

void PgnParser::between(const Token& t) {
  if (t.type == Tok::kBlankLine || t.type == Tok::kRParen) return;  // a stray ')' is no game
  begin_game();
  // A result with neither tags nor moves before it (a second result after a game, say)
  // is no game: an error, after which reading goes on at the next token.
  if (is_result_token(t)) {
    fail("", "result " + quoted(t.text) + " without tags or moves", t.line);
    state_ = State::kBetween;
    return;
  }
  if (t.type == Tok::kLBracket) {
    state_ = State::kTags;
    tag_step_ = TagStep::kName;
    return;
  }
  // A game without tags.
  setup_start(t.line);
  in_moves(t);
}

void PgnParser::in_tags(const Token& t) {
  if (t.type == Tok::kBlankLine) return;
  if (t.type == Tok::kInvalid) return fail("tags", std::string(t.text), t.line);
  switch (tag_step_) {
    case TagStep::kOpen:
      if (t.type == Tok::kLBracket) {
        tag_step_ = TagStep::kName;
        return;
      }
      // The movetext begins.
      if (setup_start(t.line))
        in_moves(t);
      else
        skipping(t);  // a result token still ends the bad game
      return;
    case TagStep::kName:
      if (t.type != Tok::kSymbol) return fail("tags", "expected a tag name after '['", t.line);
      tag_name_ = t.text;
      tag_step_ = TagStep::kValue;
      return;
    case TagStep::kValue:
      if (t.type != Tok::kString)
        return fail("tag " + tag_name_, "expected a quoted value, found " + quoted(t.text), t.line);
      if (is_valid_utf8(t.text))
        tag_value_ = t.text;
      else
        tag_value_ = windows1252_to_utf8(t.text);
      tag_step_ = TagStep::kClose;
      return;
    case TagStep::kClose:
      if (t.type != Tok::kRBracket)
        return fail("tag " + tag_name_, "expected ']' after the value, found " + quoted(t.text), t.line);
      // Keeping either value would silently drop the other.
      if (const long earlier = tag_names_.find(game_.tags, tag_name_); earlier >= 0)
        return fail("tag " + tag_name_,
                    "given twice (" + quoted(game_.tags[std::size_t(earlier)].second) + ", then " +
                        quoted(tag_value_) + ")",
                    t.line);
      if (tag_name_ == "FEN") fen_line_ = t.line;
      // The roster's "unknown" is what to_pgn writes for a missing tag: read back as missing,
      // so that a game exported and imported again is the same game.
      if (!is_unknown_roster_value(tag_name_, tag_value_)) {
        game_.tags.emplace_back(std::move(tag_name_), std::move(tag_value_));
        tag_names_.add(game_.tags);
      }
      tag_name_.clear();
      tag_value_.clear();
      tag_step_ = TagStep::kOpen;
      return;
  }
}

bool PgnParser::setup_start(int line) {
  state_ = State::kMoves;
  depth_ = 0;
  if (const std::string* fen = game_.tag("FEN")) {
    try {
      game_.start = parse_fen(*fen);
    } catch (const ParseError& e) {
      fail("FEN tag", e.what(), fen_line_ ? fen_line_ : line);
      return false;
    }
  } else if (const std::string* setup = game_.tag("SetUp"); setup && *setup == "1") {
    fail("SetUp tag", "SetUp \"1\" without a FEN tag", line);
    return false;
  }
  board_ = game_.start;
  return true;
}

void PgnParser::in_moves(const Token& t) {
  if (depth_ > 0) {  // inside a variation: only its nesting matters, its moves are not read
    switch (t.type) {
      case Tok::kLParen: ++depth_; return;
      case Tok::kRParen: --depth_; return;
      case Tok::kInvalid: return fail(move_context(), std::string(t.text), t.line);
      case Tok::kLBracket:
        fail(move_context(), "unterminated variation: '[' before its ')'", t.line);
        state_ = State::kBetween;  // the '[' opens the next game
        return between(t);
      default: return;
    }
  }
  switch (t.type) {
    case Tok::kBlankLine:
    case Tok::kPeriod:
    case Tok::kNag:
    case Tok::kAnnotation:
    case Tok::kRParen:  // a stray ')': read past
      return;
    case Tok::kStar:
      return end_game_with(t);
    case Tok::kSymbol: {
      const std::string_view& s = t.text;
      if (is_digit(s[0])) {
        if (!result_of(s).empty()) return end_game_with(t);
        if (std::all_of(s.begin(), s.end(), is_digit) && s != "0000") return;  // move number
      } else if (s[0] == 'e' && (s == "e.p." || s == "e.p" || s == "ep")) {
        return;  // en-passant mark apart from its move
      }
      if (is_null_move(s))
        return fail(move_context(s), "null move " + quoted(s) +
                                         " in the main line (null moves are read past only inside variations)",
                    t.line);
      // A result run into its move: "Qxf7#1-0", "e41/2-1/2".
      if (const std::string_view result = glued_result(s); !result.empty()) {
        play_san(s.substr(0, s.size() - result.size()), t.line);
        const Token result_token{Tok::kSymbol, result, t.line};
        if (state_ == State::kMoves)
          end_game_with(result_token);
        else
          skipping(result_token);  // the bad game ends at its result all the same
        return;
      }
      return play_san(s, t.line);
    }
    case Tok::kLParen:
      ++depth_;
      return;
    case Tok::kLBracket:  // next game's tags: this one ended without a result
      end_game(tag_result());
      return between(t);
    case Tok::kRBracket:
      return fail(move_context(), "unexpected ']' in the movetext", t.line);
    case Tok::kString:
      return fail(move_context(), "unexpected quoted string " + quoted(t.text) + " in the movetext", t.line);
    case Tok::kInvalid:
      return fail(move_context(), std::string(t.text), t.line);
  }
}

void PgnParser::play_san(std::string_view san, int line) {
  if (!readings_.empty()) {
    // The other readings of an earlier ambiguous move go on or end here.
    std::vector<Reading> kept;
    for (Reading& r : readings_) {
      try {
        const Move m = parse_san(r.board, san);
        play_checked<false>(r.board, m);
        r.moves.push_back(m);
        kept.push_back(std::move(r));
      } catch (const ParseError&) {
      }
    }
    readings_ = std::move(kept);
  }
  Move m;
  try {
    m = parse_san(board_, san);
    play_checked<false>(board_, m);  // board_'s key is never read
  } catch (const IllegalMove& e) {
    std::vector<Move> candidates;
    try {
      candidates = san_candidates(board_, san);
    } catch (const ParseError&) {
    }
    if (candidates.size() > 1 && readings_.size() + candidates.size() <= kMaxReadings) {
      // Ambiguous: follow every reading to the game's end (pgn-extract's and kokopu's rule).
      ambiguous_.emplace_back(move_context(san), game_.moves.size());
      for (std::size_t i = 1; i < candidates.size(); ++i) {
        Reading r{board_, game_.moves};
        play_checked<false>(r.board, candidates[i]);
        r.moves.push_back(candidates[i]);
        readings_.push_back(std::move(r));
      }
      m = candidates[0];
      play_checked<false>(board_, m);
    } else if (!readings_.empty()) {
      // This reading ends here; another one goes on.
      board_ = readings_.front().board;
      game_.moves = std::move(readings_.front().moves);
      readings_.erase(readings_.begin());
      return;
    } else {
      return fail(move_context(san), e.what(), line);
    }
  } catch (const ParseError& e) {
    return fail(move_context(san), e.what(), line);
  }
  game_.moves.push_back(m);
}

// Whether the game has one reading at its end; else it is made bad.
bool PgnParser::ambiguity_settled(int line) {
  if (ambiguous_.empty()) return true;
  if (readings_.empty()) {
    for (const auto& [where, ply] : ambiguous_)
      game_.resolved.push_back(where + " read as " + to_uci(game_.moves[ply]));
    ambiguous_.clear();
    return true;
  }
  const std::string where = ambiguous_.front().first;
  readings_.clear();
  ambiguous_.clear();
  fail(where, "ambiguous move: more than one of the moves it could mean keeps the game legal to its end", line);
  return false;
}

// [%eval 0.17] [%eval #-3] [%eval 1.2,24] and [%clk 0:03:12] (or [%clk 0:00:09.5]) of the
// comment after the last main-line move; other commands and text are read past.
void PgnParser::end_comment() {
  capture_comment_ = false;
  const std::size_t ply = game_.moves.size() - 1;
  const auto command = [&](std::string_view name) -> std::string_view {
    const std::size_t at = comment_.find(name);
    if (at == std::string::npos) return {};
    // Blanks and line ends may stand between the command and its value.
    const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    std::size_t b = at + name.size();
    while (b < comment_.size() && blank(comment_[b])) ++b;
    std::size_t e = b;
    while (e < comment_.size() && comment_[e] != ']' && !blank(comment_[e])) ++e;
    return std::string_view(comment_).substr(b, e - b);
  };
  std::string_view eval = command("[%eval");
  if (const std::size_t comma = eval.find(','); comma != std::string_view::npos) eval = eval.substr(0, comma);
  const auto digits = [](std::string_view t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return is_digit(c); });
  };
  bool eval_ok = false;
  if (eval.size() > 1 && eval[0] == '#') {
    const std::string_view n = eval.substr(eval[1] == '-' || eval[1] == '+' ? 2 : 1);
    eval_ok = digits(n) && n.size() <= 4;
  } else if (!eval.empty()) {
    std::string_view n = eval.substr(eval[0] == '-' || eval[0] == '+' ? 1 : 0);
    const std::size_t dot = n.find('.');
    eval_ok = n.size() <= 8 && digits(n.substr(0, dot)) && (dot == std::string_view::npos || digits(n.substr(dot + 1)));
  }
  if (eval_ok) {
    game_.evals.resize(ply + 1);
    game_.evals[ply] = std::string(eval);
  }
  if (const std::optional<double> clock = clock_seconds(command("[%clk"))) {
    game_.clocks.resize(ply + 1, -1);
    game_.clocks[ply] = *clock;
  }
}

void PgnParser::skipping(const Token& t) {
  switch (t.type) {
    case Tok::kBlankLine: skip_blank_ = true; return;
    case Tok::kLParen: ++depth_; return;
    case Tok::kRParen: if (depth_ > 0) --depth_; return;
    case Tok::kLBracket:
      if (skip_blank_) {
        state_ = State::kBetween;
        between(t);
      }
      return;
    default:
      if (is_result_token(t) && depth_ == 0) state_ = State::kBetween;
      return;
  }
}

void PgnParser::end_game(std::string_view result) {
  if (!ambiguity_settled(token_line_)) return;
  game_.result = result;
  if (!game_.evals.empty()) game_.evals.resize(game_.moves.size());
  if (!game_.clocks.empty()) game_.clocks.resize(game_.moves.size(), -1);
  ready_.push_back(std::move(game_));
  game_ = PgnGame();
  state_ = State::kBetween;
}

// The movetext's result token ends the game. A Result tag that says otherwise wins, as
// pgn-extract and python-chess read it (a tag is what databases index and players see);
// the movetext's result is kept beside it.
void PgnParser::end_game_with(const Token& t) {
  const std::string_view result = result_of(t.text);
  const std::string* tag = game_.tag("Result");
  if (tag) {
    const std::string_view tagged = result_of(*tag);
    if (!tagged.empty() && tagged != result) {
      game_.movetext_result = result;
      end_game(tagged);
      if (state_ == State::kSkip) state_ = State::kBetween;  // a bad game ends here all the same
      return;
    }
  }
  end_game(result);
  if (state_ == State::kSkip) state_ = State::kBetween;
}

void PgnParser::fail(const std::string& where, const std::string& what, int line) {
  last_error_ = "PGN game " + std::to_string(game_.number) + (where.empty() ? "" : ", " + where) + ": " +
                what + " (line " + std::to_string(line) + ")";
  error_game_ = game_.number;
  error_line_ = line;
  ++skipped_;
  state_ = State::kSkip;
  skip_blank_ = false;
  game_ = PgnGame();
  if (mode_ == PgnErrorMode::kFail) throw_pending_ = true;
}

std::string PgnParser::move_context(std::string_view san) const {
  std::string s = "move " + std::to_string(board_.fullmove);
  if (board_.side == kBlack) s += "...";
  else if (!san.empty()) s += '.';
  if (!san.empty()) {
    s += ' ';
    s += san;
  }
  return s;
}

std::string PgnParser::tag_result() const {
  const std::string* r = game_.tag("Result");
  const std::string_view result = r ? result_of(*r) : std::string_view();
  return result.empty() ? "*" : std::string(result);
}

}  // namespace detail

// ---------------------------------------------------------------- PgnReader

PgnReader::PgnReader(PgnErrorMode mode, std::function<void()> poll)
    : parser_(std::make_unique<detail::PgnParser>(mode, std::move(poll))) {}
PgnReader::~PgnReader() = default;
PgnReader::PgnReader(PgnReader&&) noexcept = default;
PgnReader& PgnReader::operator=(PgnReader&&) noexcept = default;

void PgnReader::feed(std::string_view chunk) {
  if (finished_) throw std::logic_error("PgnReader::feed after finish()");
  // Release consumed input; moving the rest only when it is at most as long as what is
  // released keeps the cost linear.
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ >= (1u << 16) && offset_ * 2 >= buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(chunk);
}

void PgnReader::finish() { finished_ = true; }

bool PgnReader::next(PgnGame& out) {
  bool got = parser_->next(buffer_, offset_, finished_, out);
  if (!got && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  return got;
}

int PgnReader::skipped() const { return parser_->skipped(); }
const std::string& PgnReader::last_error() const { return parser_->last_error(); }

std::vector<PgnGame> parse_pgn(std::string_view text, PgnErrorMode mode, int* skipped) {
  detail::PgnParser parser(mode);
  std::vector<PgnGame> games;
  size_t pos = 0;
  PgnGame g;
  while (parser.next(text, pos, true, g)) games.push_back(std::move(g));
  if (skipped) *skipped = parser.skipped();
  return games;
}

// ---------------------------------------------------------------- writer

namespace {

// What the reader takes as a tag name: a PGN symbol (standard names use only letters,
// digits and '_').
void check_tag_name(const std::string& name) {
  bool ok = !name.empty() && is_alnum(name[0]);
  for (char c : name) ok = ok && is_symbol_char(c);
  if (!ok)
    throw std::invalid_argument("to_pgn: tag name " + quoted(name) +
                                " must start with a letter or digit and hold only letters, digits and _+#=:-/");
}

void write_tag(std::string& out, std::string_view name, std::string_view value) {
  out += '[';
  out += name;
  out += " \"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += "\"]\n";
}

}  // namespace

std::string to_pgn(const PgnTags& tags, const Board& start, const std::vector<Move>& moves,
                   std::string_view result) {
  return to_pgn(tags, start, moves, result, PgnMoveNotes{});
}

std::string to_pgn(const PgnTags& tags, const Board& start, const std::vector<Move>& moves, std::string_view result,
                   const PgnMoveNotes& notes) {
  if ((!notes.suffix.empty() && notes.suffix.size() != moves.size()) ||
      (!notes.comments.empty() && notes.comments.size() != moves.size()))
    throw std::invalid_argument("to_pgn: the annotations must be one per move");
  for (const std::string& suffix : notes.suffix)
    if (!suffix.empty() && suffix != "!" && suffix != "?" && suffix != "!!" && suffix != "??" && suffix != "!?" &&
        suffix != "?!")
      throw std::invalid_argument("to_pgn: move suffix " + quoted(suffix) + " must be one of ! ? !! ?? !? ?!");
  if (!is_result(result))
    throw std::invalid_argument("to_pgn: result " + quoted(result) + " must be 1-0, 0-1, 1/2-1/2 or *");
  detail::TagNames names;
  for (size_t i = 0; i < tags.size(); ++i) {
    check_tag_name(tags[i].first);
    if (names.find(tags, tags[i].first) >= 0)  // the reader refuses a repeated tag
      throw std::invalid_argument("to_pgn: tag " + quoted(tags[i].first) + " is given twice");
    names.add(tags);
  }

  auto find = [&](std::string_view name) -> const std::string* {
    for (const auto& [k, v] : tags)
      if (k == name) return &v;
    return nullptr;
  };
  static constexpr std::pair<std::string_view, std::string_view> kRoster[] = {
      {"Event", "?"}, {"Site", "?"}, {"Date", "????.??.??"}, {"Round", "?"}, {"White", "?"}, {"Black", "?"}};

  std::string out;
  for (const auto& [name, fallback] : kRoster) {
    const std::string* v = find(name);
    write_tag(out, name, v ? std::string_view(*v) : fallback);
  }
  write_tag(out, "Result", result);
  const std::string fen = to_fen(start);
  if (fen != kStartFen) {
    write_tag(out, "SetUp", "1");
    write_tag(out, "FEN", fen);
  }
  for (const auto& [name, value] : tags) {
    bool derived = name == "Result" || name == "SetUp" || name == "FEN";
    for (const auto& r : kRoster) derived = derived || name == r.first;
    if (!derived) write_tag(out, name, value);
  }
  out += '\n';

  std::string line;
  auto put = [&](std::string_view unit) {
    if (!line.empty() && line.size() + 1 + unit.size() > kLineWidth) {
      out += line;
      out += '\n';
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += unit;
  };
  Board b = start;
  bool after_comment = false;
  for (size_t i = 0; i < moves.size(); ++i) {
    const Move m = moves[i];
    if (!is_legal(b, m))
      throw std::invalid_argument("to_pgn: move " + std::to_string(i + 1) + " (" + to_uci(m) +
                                  ") is not legal in " + to_fen(b));
    std::string unit;
    if (b.side == kWhite)
      unit = std::to_string(b.fullmove) + ". ";
    else if (i == 0 || after_comment)
      unit = std::to_string(b.fullmove) + "... ";
    unit += to_san(b, m);
    if (!notes.suffix.empty()) unit += notes.suffix[i];
    put(unit);
    after_comment = false;
    if (!notes.comments.empty() && !notes.comments[i].empty()) {
      // A comment is one unit per word, so lines still wrap at 79 columns.
      std::string text = notes.comments[i];
      for (char& c : text) {
        if (c == '{') c = '(';
        else if (c == '}') c = ')';
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
      }
      put("{");
      for (std::size_t at = 0; at < text.size();) {
        // A command ("[%eval 0.17]") stays on one line: readers take it whole.
        std::size_t end = std::min(text.find(' ', at), text.size());
        if (text.compare(at, 2, "[%") == 0)
          if (const std::size_t close = text.find(']', at); close != std::string::npos) end = close + 1;
        if (end > at) put(std::string_view(text).substr(at, end - at));
        at = end + 1;
      }
      put("}");
      after_comment = true;
    }
    play_checked(b, m);  // never a repeated move number
  }
  put(result);
  out += line;
  out += '\n';
  return out;
}

std::string to_pgn(const PgnGame& game) { return to_pgn(game.tags, game.start, game.moves, game.result); }

std::string tags_json(const PgnTags& tags) {
  std::string json;
  append_tags_json(json, tags);
  return json;
}

namespace {

// The object of the tags that `tag(i)` gives for i from 0 to n, in that order.
template <class Tag>
void append_tags_object(std::string& json, std::size_t n, Tag tag) {
  json += '{';
  for (std::size_t i = 0; i < n; ++i) {
    if (i) json += ", ";
    append_json_string(json, tag(i).first);
    json += ": ";
    append_json_string(json, tag(i).second);
  }
  json += '}';
}

}  // namespace

void append_tags_json(std::string& json, const PgnTags& tags) {
  append_tags_object(json, tags.size(), [&](std::size_t i) -> const auto& { return tags[i]; });
}

void append_tags_json_in_jsonb_order(std::string& json, const PgnTags& tags) {
  // An order of the tags kept with the thread: a game has a dozen tags, and this is called
  // once a game.
  thread_local std::vector<const std::pair<std::string, std::string>*> order;
  order.clear();
  for (const auto& tag : tags) order.push_back(&tag);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->first.size() != b->first.size() ? a->first.size() < b->first.size() : a->first < b->first;
  });
  append_tags_object(json, order.size(), [&](std::size_t i) -> const auto& { return *order[i]; });
}

}  // namespace pgmate::chess
