// PGN (Portable Game Notation) in and out.
//
// Reading: PgnReader takes text in chunks of any size (a stream, a file read piece by piece)
// and hands out complete games; parse_pgn does the same for one string. Every mainline
// move is checked against the position with parse_san; variations, NAGs and annotations
// are read past and dropped, and of the comments only the main line's [%eval] and [%clk]
// commands are kept (PgnGame::evals, clocks). Memory stays bounded by one game: consumed input
// is released, and single tokens (a move, a tag value) are capped in length.
//
// The dialect read is import format plus what PGN found in the wild holds (as pgn-extract
// and kokopu read it):
//   - moves in SAN or long algebraic ("Ng1-f3", "g1-f3", "e2xe4", "e7-e8=Q", "g1f3"),
//     castling as O-O, 0-0 or the king's two-square step; "e.p."/"ep" after a capture;
//     a check sign apart from its move ("Nf3 +") and evaluation signs ("+-", "=") ignored;
//   - results 1-0, 0-1, 1/2-1/2, *, and also "1/2" (in a Result tag too) and "½-½" (UTF-8
//     or Latin-1) for a draw; a result run into the last move ("Qxf7#1-0") is split off;
//   - null moves ("--", "Z0", "0000", "@@@@") inside variations; in the main line one is
//     an error (the main line must be a legal game);
//   - stray ',' '}' and ')' outside comments and variations are ignored;
//   - a '"' inside a tag value needs no backslash: the value ends at the quote followed
//     (after blanks) by ']' or the line end, so [Event "The "Big" Open"] gives
//     The "Big" Open;
//   - tag values are UTF-8: a value that is not valid UTF-8 is read as Windows-1252
//     (Latin-1 plus € „ “ ” ‘ ’ – — ... in 0x80-0x9F) and converted, each value on its own
//     (one that is valid UTF-8 is never changed, so files merged from several sources
//     keep their UTF-8 values; a Windows-1252 value whose bytes happen to be valid UTF-8,
//     which takes pairs such as "Ã©", is read as UTF-8);
//   - tags and the result may be missing (see PgnReader).
// Comments may hold any bytes. A BOM and CR LF line ends are read past.
//
// Writing: to_pgn gives export format (Seven Tag Roster, SAN movetext with move numbers,
// lines of at most 79 characters).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chess/board.h"
#include "chess/fen.h"

namespace pgmate::chess {

using PgnTags = std::vector<std::pair<std::string, std::string>>;

struct PgnGame {
  PgnTags tags;             // in file order, unescaped, values in UTF-8; no name twice; a roster
                            // tag that says "unknown" ("?", Date "????.??.??") is left out
  Board start;              // the FEN tag's position when there is one, else the standard start
  std::vector<Move> moves;  // the mainline, each move legal in turn
  std::string result;       // "1-0", "0-1", "1/2-1/2" or "*"
  int number = 0;           // 1-based index of the game in the input (bad games count too)
  // The result that ended the movetext when the Result tag says another ("" when they
  // agree): the game keeps the tag's result, as pgn-extract and python-chess read it.
  std::string movetext_result;
  // What the main line's comments say after each move, in lichess's and ChessBase's
  // commands: evals[i] the "[%eval ...]" after moves[i] as written ("0.17", "-1.5", "#3",
  // "#-2": pawns or moves to mate, White's view; "" when none), clocks[i] the "[%clk ...]"
  // time left in seconds (-1 when none). Both are empty when the game has none.
  std::vector<std::string> evals;
  std::vector<double> clocks;
  // A SAN move that named more than one legal move, read as the only one that kept the
  // game legal to its end: "move 12. Nd2 read as b1d2". Empty when there was none.
  std::vector<std::string> resolved;

  // The value of the tag with this name, or nullptr.
  const std::string* tag(std::string_view name) const;
};

// A bad game. The message names the game, the place and the cause, and ends with the
// input line, e.g.
//   PGN game 3, move 12... Nxe5: illegal move "Nxe5" in <fen>: no legal move matches (line 40)
//   PGN game 2, FEN tag: invalid FEN "...": White has no king (line 7)
//   PGN game 5, move 20: unexpected character '<' (line 88)
// Besides unreadable text and illegal main-line moves (a null move there included), a game
// is bad when a tag name appears twice ("tag Event: given twice"), when a SAN move is
// ambiguous and more than one (or none) of its readings keeps the game legal to its end, or
// when it is a bare result with neither tags nor moves, such as a second result after a
// game ("1. e4 e5 1-0 0-1": the "0-1" is bad game 2). A Result tag that contradicts the
// result ending the movetext does not make the game bad: see PgnGame::movetext_result.
class PgnError : public ParseError {
 public:
  PgnError(const std::string& message, int game, int line)
      : ParseError(message), game_(game), line_(line) {}
  int game() const { return game_; }  // 1-based game number
  int line() const { return line_; }  // 1-based input line

 private:
  int game_;
  int line_;
};

enum class PgnErrorMode {
  kFail,  // next() throws PgnError for the first bad game
  kSkip,  // bad games are dropped and counted (skipped(), last_error())
};

namespace detail {
class PgnParser;

// A game's tag names as they are read, for the "given twice" check: looked through one by
// one while there are few, through a hash index beyond, so that n tags cost O(n) and not
// O(n^2) however many hostile input gives a game.
class TagNames {
 public:
  void clear() {
    index_.clear();
    size_ = 0;
  }
  // The index of the tag named `name` among tags[0, size()), or -1.
  long find(const PgnTags& tags, std::string_view name);
  // Takes tags[size()] in (the same list as find()'s).
  void add(const PgnTags& tags);
  std::size_t size() const { return size_; }
  // Names compared or looked up in the index so far: the work done.
  std::uint64_t work() const { return work_; }

 private:
  static constexpr std::size_t kScanned = 16;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> index_;
  std::size_t size_ = 0;
  std::uint64_t work_ = 0;
};
}  // namespace detail

// Incremental reader:
//   PgnReader r;  while (read a chunk) { r.feed(chunk); while (r.next(g)) use(g); }
//   r.finish();   while (r.next(g)) use(g);
// A game is handed out as soon as its result token is read, or, when it has none, once
// the next game's tags begin or the input is finished (its result is then the Result tag's
// value, or "*").
// After a bad game the reader resynchronises: it skips to the bad game's result, or to the
// next '[' that follows a blank line. In kFail mode next() throws the PgnError once; a
// caller that catches it may call next() again to go on with the following games.
class PgnReader {
 public:
  // `poll` (when given) is called every few thousand tokens while reading; it may throw
  // (query cancel), after which the reader is not used again.
  explicit PgnReader(PgnErrorMode mode = PgnErrorMode::kFail, std::function<void()> poll = {});
  ~PgnReader();
  PgnReader(PgnReader&&) noexcept;
  PgnReader& operator=(PgnReader&&) noexcept;

  // Appends text; a chunk may end anywhere, even inside a token. Not after finish().
  void feed(std::string_view chunk);
  // No more input: a game left open at the end is completed (or reported bad).
  void finish();
  // Takes the next complete game; false when more input is needed (or, after finish(),
  // when the input is exhausted).
  bool next(PgnGame& out);

  int skipped() const;                    // bad games so far
  const std::string& last_error() const;  // message of the last bad game ("" if none)

 private:
  std::unique_ptr<detail::PgnParser> parser_;
  std::string buffer_;
  size_t offset_ = 0;  // consumed prefix of buffer_
  bool finished_ = false;
};

// All games of `text`. With kSkip, bad games are left out and counted in *skipped.
std::vector<PgnGame> parse_pgn(std::string_view text, PgnErrorMode mode = PgnErrorMode::kFail,
                               int* skipped = nullptr);

// One game in PGN export format:
//   - the Seven Tag Roster first (Event, Site, Date, Round, White, Black, Result), values
//     taken from `tags` or "?" ("????.??.??" for Date); Result is always `result`;
//   - SetUp "1" and FEN when `start` is not the standard start position (SetUp and FEN
//     entries of `tags` are ignored: they are always derived from `start`);
//   - the other tags in their given order; quotes and backslashes escaped, control
//     characters written as spaces;
//   - a blank line, then the SAN movetext with move numbers ("N..." first when Black is
//     to move at the start), wrapped to lines of at most 79 characters, ending with the
//     result and a newline.
// Games written one after another should be separated by a blank line ("\n").
// Throws std::invalid_argument for an illegal move (IllegalMove, also past move 65535), a
// bad result, a bad or repeated tag name.
std::string to_pgn(const PgnTags& tags, const Board& start, const std::vector<Move>& moves,
                   std::string_view result);
// The tags as a JSON object text ({"Event": "...", ...}), in order; a repeated name
// appears twice (JSON readers such as jsonb keep the last). Text must be valid UTF-8.
std::string tags_json(const PgnTags& tags);
// The same appended to `json` (no allocation beyond its growth).
void append_tags_json(std::string& json, const PgnTags& tags);
// The same with the names in jsonb's order (shorter first, then by bytes; a repeated name's
// copies in the order read): PostgreSQL then finds an object's keys sorted already, and
// reads the text about a sixth faster.
void append_tags_json_in_jsonb_order(std::string& json, const PgnTags& tags);

// Annotations written after each move: suffix[i] glued to move i's SAN ("?!", "??"; "" for
// none) and comments[i] as "{ ... }" after it (braces in the text become parentheses; "" for
// none). Each vector is empty or one entry per move. After a comment, a Black move is
// numbered again ("3... Nf6"), as export format asks.
struct PgnMoveNotes {
  std::vector<std::string> suffix;
  std::vector<std::string> comments;
};
std::string to_pgn(const PgnTags& tags, const Board& start, const std::vector<Move>& moves, std::string_view result,
                   const PgnMoveNotes& notes);

std::string to_pgn(const PgnGame& game);

}  // namespace pgmate::chess
