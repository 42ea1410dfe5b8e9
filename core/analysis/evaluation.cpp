#include "analysis/evaluation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "chess/game.h"
#include "chess/notation.h"
#include "common/text.h"

namespace pgmate::analysis {

namespace {

// The next blank-separated word of `line` from `pos` on ("" at the end).
std::string_view next_word(std::string_view line, std::size_t& pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const std::size_t begin = pos;
  while (pos < line.size() && line[pos] != ' ') ++pos;
  return line.substr(begin, pos - begin);
}

template <class T>
T number(std::string_view word, std::string_view what) {
  T value{};
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size())
    throw std::invalid_argument("UCI info: " + std::string(what) + " " + quote_input(word, 24) + " is not a number");
  return value;
}

}  // namespace

std::optional<PvLine> parse_info_line(std::string_view line, const chess::Board& position) {
  std::size_t pos = 0;
  if (next_word(line, pos) != "info") return std::nullopt;
  PvLine out;
  bool scored = false;
  std::vector<std::string_view> pv_words;
  for (;;) {
    const std::string_view key = next_word(line, pos);
    if (key.empty()) break;
    if (key == "depth") {
      out.depth = number<int>(next_word(line, pos), "depth");
    } else if (key == "seldepth") {
      out.seldepth = number<int>(next_word(line, pos), "seldepth");
    } else if (key == "multipv") {
      out.multipv = number<int>(next_word(line, pos), "multipv");
      if (out.multipv < 1 || out.multipv > 256) throw std::invalid_argument("UCI info: multipv out of range");
    } else if (key == "nodes") {
      out.nodes = number<std::int64_t>(next_word(line, pos), "nodes");
    } else if (key == "score") {
      const std::string_view kind = next_word(line, pos);
      if (kind != "cp" && kind != "mate") throw std::invalid_argument("UCI info: unknown score " + quote_input(kind, 24));
      out.score.mate = kind == "mate";
      out.score.value = number<int>(next_word(line, pos), "score");
      scored = true;
      // A bound is not the position's value: a later line gives it.
      std::size_t peek = pos;
      const std::string_view bound = next_word(line, peek);
      if (bound == "lowerbound" || bound == "upperbound") return std::nullopt;
    } else if (key == "wdl") {
      Wdl w;
      w.win = number<int>(next_word(line, pos), "wdl");
      w.draw = number<int>(next_word(line, pos), "wdl");
      w.loss = number<int>(next_word(line, pos), "wdl");
      if (w.win < 0 || w.draw < 0 || w.loss < 0 || w.win + w.draw + w.loss != 1000)
        throw std::invalid_argument("UCI info: wdl " + std::to_string(w.win) + " " + std::to_string(w.draw) + " " +
                                    std::to_string(w.loss) + " does not sum to 1000");
      out.wdl = w;
    } else if (key == "pv") {
      // The rest of the line is the variation.
      for (std::string_view w = next_word(line, pos); !w.empty(); w = next_word(line, pos)) pv_words.push_back(w);
    } else if (key == "string") {
      return std::nullopt;  // free text to the end of the line
    }
    // Other keys (time, nps, hashfull, tbhits, currmove ...) take one value or none: their
    // values are numbers or moves, never one of the keys above, so reading on is safe.
  }
  if (!scored) return std::nullopt;
  if (out.score.mate ? std::abs(out.score.value) > kMaxMateMoves : std::abs(out.score.value) > kMaxCentipawns)
    throw std::invalid_argument("UCI info: score " + to_string(out.score) + " out of range");
  chess::Board b = position;
  for (const std::string_view w : pv_words) {
    chess::Move m;
    try {
      m = chess::parse_uci(b, w);
    } catch (const chess::ParseError&) {
      break;
    }
    out.pv.push_back(m);
    b.play(m);
    if (out.pv.size() >= 64) break;  // enough of a variation to keep
  }
  if (out.pv.empty()) return std::nullopt;
  if (out.score.mate && out.score.value == 0)
    throw std::invalid_argument("UCI info: score mate 0 in a position with legal moves");
  return out;
}

Wdl wdl_model(const Score& score) {
  if (score.mate) return score.value > 0 ? Wdl{1000, 0, 0} : Wdl{0, 0, 1000};
  const double cp = score.value;
  const auto chance = [](double x) { return 1.0 / (1.0 + std::exp(-(x - kWdlMidpoint) / kWdlScale)); };
  Wdl w;
  w.win = int(std::lround(1000 * chance(cp)));
  w.loss = int(std::lround(1000 * chance(-cp)));
  w.draw = 1000 - w.win - w.loss;
  return w;
}

std::optional<PositionEval> terminal_eval(const chess::Board& position) {
  const chess::GameStatus status = chess::board_status(position);
  PositionEval e;
  PvLine line;
  if (status == chess::GameStatus::kCheckmate) {
    line.score = Score{true, 0};
    e.wdl = Wdl{0, 0, 1000};
  } else if (status == chess::GameStatus::kStalemate || status == chess::GameStatus::kInsufficientMaterial) {
    line.score = Score{false, 0};
    e.wdl = Wdl{0, 1000, 0};
  } else {
    return std::nullopt;
  }
  e.lines.push_back(line);
  e.wdl_from_engine = false;
  return e;
}

PositionEval make_eval(const chess::Board& position, std::vector<PvLine> lines, std::string_view bestmove) {
  chess::Move best;
  try {
    best = chess::parse_uci(position, bestmove);
  } catch (const chess::ParseError& e) {
    throw std::invalid_argument("best move " + quote_input(bestmove, 16) + " is not legal here: " + e.what());
  }
  std::sort(lines.begin(), lines.end(), [](const PvLine& a, const PvLine& b) { return a.multipv < b.multipv; });
  // The best move's line first: an engine's first line is its choice.
  auto chosen = std::find_if(lines.begin(), lines.end(), [&](const PvLine& l) { return l.pv.front() == best; });
  if (chosen == lines.end()) {
    if (lines.empty()) throw std::invalid_argument("no scored line before bestmove " + quote_input(bestmove, 16));
    // The principal variation ran past the last report: the best move with the first line's score.
    lines.front().pv = {best};
    chosen = lines.begin();
  }
  std::rotate(lines.begin(), chosen, chosen + 1);
  PositionEval e;
  e.best = best;
  for (const PvLine& l : lines) {
    e.depth = std::max(e.depth, l.depth);
    e.nodes = std::max(e.nodes, l.nodes);
  }
  e.wdl_from_engine = lines.front().wdl.has_value();
  e.wdl = e.wdl_from_engine ? *lines.front().wdl : wdl_model(lines.front().score);
  e.lines = std::move(lines);
  return e;
}

chess::Board without_clocks(chess::Board b) {
  b.halfmove = 0;
  b.fullmove = 1;
  return b;
}

std::string to_string(const Score& s) { return (s.mate ? "mate " : "cp ") + std::to_string(s.value); }

}  // namespace pgmate::analysis
