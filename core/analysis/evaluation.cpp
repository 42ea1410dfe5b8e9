#include "analysis/evaluation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/notation.h"
#include "common/flat_json.h"
#include "common/json.h"
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
  // Each line is another move's: a move given twice would be stored twice (and trained on as two targets).
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (lines[j].pv.front() == lines[i].pv.front())
        throw std::invalid_argument("lines " + std::to_string(lines[j].multipv) + " and " + std::to_string(lines[i].multipv) +
                                    " both begin with " + chess::to_uci(lines[i].pv.front()));
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

namespace {

std::string pv_text(const std::vector<chess::Move>& pv) {
  std::string out;
  for (const chess::Move m : pv) {
    if (!out.empty()) out += ' ';
    out += chess::to_uci(chess::board_free(m));
  }
  return out;
}

void append_score(std::string& out, const Score& s) {
  out += s.mate ? "\"cp\": null, \"mate\": " + std::to_string(s.value) : "\"cp\": " + std::to_string(s.value) + ", \"mate\": null";
}

}  // namespace

std::string eval_json(const chess::Board& position, const PositionEval& e, bool with_lines) {
  std::string out = "{\"board\": ";
  append_json_string(out, chess::to_fen(position));
  out += ", ";
  append_score(out, e.score());
  out += ", \"win\": " + std::to_string(e.wdl.win) + ", \"draw\": " + std::to_string(e.wdl.draw) +
         ", \"loss\": " + std::to_string(e.wdl.loss);
  out += std::string(", \"wdl_source\": ") + (e.wdl_from_engine ? "\"engine\"" : "\"model\"");
  out += ", \"best\": " + (e.best.is_null() ? std::string("null") : "\"" + chess::to_uci(chess::board_free(e.best)) + "\"");
  const std::vector<chess::Move>& pv = e.lines.front().pv;
  out += ", \"pv\": " + (pv.empty() ? std::string("null") : "\"" + pv_text(pv) + "\"");
  // 0: not searched (a position without moves, an evaluation read from PGN)
  out += ", \"depth\": " + (e.depth ? std::to_string(e.depth) : std::string("null"));
  out += ", \"nodes\": " + (e.nodes ? std::to_string(e.nodes) : std::string("null"));
  out += ", \"lines\": ";
  if (!with_lines || e.lines.size() < 2 || e.lines.front().pv.empty()) {
    out += "null}";
    return out;
  }
  out += '[';
  for (std::size_t i = 0; i < e.lines.size(); ++i) {
    const PvLine& l = e.lines[i];
    if (i) out += ", ";
    out += "{\"move\": \"" + chess::to_uci(chess::board_free(l.pv.front())) + "\", ";
    append_score(out, l.score);
    out += ", \"pv\": \"" + pv_text(l.pv) + "\"}";
  }
  out += "]}";
  return out;
}

namespace {

constexpr std::size_t kMaxStoredPv = 1000;

// The legal move of `b` that `m` names (board-free, as SQL stores it), null for none.
chess::Move legal_or_null(const chess::Board& b, chess::Move m) {
  try {
    return chess::resolve_move(b, m);
  } catch (const std::exception&) {
    return chess::Move();
  }
}

// Why a score cannot be stored for `position` ("" when it can).
std::string stored_score_problem(const chess::Board& position, const Score& s, const char* what) {
  if (!s.mate && std::abs(s.value) > kMaxCentipawns)
    return std::string(what) + " " + std::to_string(s.value) + " cp is beyond +-" + std::to_string(kMaxCentipawns);
  if (s.mate && std::abs(s.value) > kMaxMateMoves)
    return std::string(what) + " mate " + std::to_string(s.value) + " is beyond +-" + std::to_string(kMaxMateMoves);
  if (s.mate && s.value == 0 && chess::board_status(position) != chess::GameStatus::kCheckmate)
    return std::string(what) + " mate 0 in a position that is not checkmate";
  return "";
}

// Plays `pv` from `position`; the problem with it, "" when every move is legal in turn.
std::string stored_pv_problem(chess::Board b, const std::vector<chess::Move>& pv, const std::string& what) {
  if (pv.size() > kMaxStoredPv) return what + " has more than " + std::to_string(kMaxStoredPv) + " moves";
  for (std::size_t i = 0; i < pv.size(); ++i) {
    try {
      chess::play_checked(b, chess::resolve_move(b, pv[i]));
    } catch (const std::exception&) {
      return what + " move " + std::to_string(i + 1) + " (" + chess::to_uci(pv[i]) + ") is not legal";
    }
  }
  return "";
}

// The flat objects of a JSON array text, each as its own text; throws std::invalid_argument
// for anything else.
std::vector<std::string_view> flat_json_array(std::string_view text) {
  std::size_t i = 0;
  const auto blank = [&] { while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) ++i; };
  std::vector<std::string_view> out;
  blank();
  if (i == text.size() || text[i] != '[') throw std::invalid_argument("is not an array");
  ++i;
  blank();
  if (i < text.size() && text[i] == ']') throw std::invalid_argument("is an empty array");
  for (;;) {
    blank();
    if (i == text.size() || text[i] != '{') throw std::invalid_argument("element " + std::to_string(out.size() + 1) + " is not an object");
    const std::size_t begin = i;
    bool quoted = false;
    for (++i; i < text.size() && (quoted || text[i] != '}'); ++i) {
      if (quoted && text[i] == '\\') ++i;
      else if (text[i] == '"') quoted = !quoted;
    }
    if (i == text.size()) throw std::invalid_argument("element " + std::to_string(out.size() + 1) + " is not closed");
    out.push_back(text.substr(begin, ++i - begin));
    blank();
    if (i < text.size() && text[i] == ',') { ++i; continue; }
    if (i < text.size() && text[i] == ']') break;
    throw std::invalid_argument("has text after element " + std::to_string(out.size()));
  }
  ++i;
  blank();
  if (i != text.size()) throw std::invalid_argument("has text after the array");
  return out;
}

}  // namespace

std::string stored_eval_problem(const chess::Board& position, std::optional<Score> score, chess::Move best,
                                const std::vector<chess::Move>& pv, const std::optional<std::string>& lines_json) {
  if (score)
    if (std::string p = stored_score_problem(position, *score, "score"); !p.empty()) return p;
  if (!best.is_null() && legal_or_null(position, best).is_null())
    return "best_move " + chess::to_uci(best) + " is not legal";
  if (std::string p = stored_pv_problem(position, pv, "pv"); !p.empty()) return p;
  if (!pv.empty() && (best.is_null() || chess::board_free(pv.front()) != chess::board_free(best)))
    return "pv begins with " + chess::to_uci(pv.front()) + ", not with best_move " + (best.is_null() ? "NULL" : chess::to_uci(best));
  if (!lines_json) return "";
  std::vector<std::string_view> elements;
  try {
    elements = flat_json_array(*lines_json);
  } catch (const std::invalid_argument& e) {
    return std::string("lines ") + e.what();
  }
  std::vector<chess::Move> firsts;
  for (std::size_t n = 0; n < elements.size(); ++n) {
    const std::string what = "lines[" + std::to_string(n + 1) + "]";
    try {
      const std::vector<FlatJsonField> fields = parse_flat_json(elements[n], what);
      const FlatJsonField *move = nullptr, *cp = nullptr, *mate = nullptr, *line_pv = nullptr;
      for (const FlatJsonField& f : fields) {
        const FlatJsonField** slot = f.key == "move" ? &move : f.key == "cp" ? &cp : f.key == "mate" ? &mate : f.key == "pv" ? &line_pv : nullptr;
        if (!slot) return what + ": unknown key " + quote_input(f.key, 24);
        *slot = &f;
      }
      if (!move || !move->quoted) return what + ": move must be a string";
      const chess::Move m = legal_or_null(position, chess::parse_uci_syntax(move->value));
      if (m.is_null()) return what + ": move " + quote_input(move->value, 16) + " is not legal";
      for (chess::Move f : firsts)
        if (f == m) return what + ": another line already begins with " + chess::to_uci(chess::board_free(m));
      firsts.push_back(m);
      if (n == 0 && (best.is_null() || chess::board_free(m) != chess::board_free(best)))
        return what + ": begins with " + chess::to_uci(chess::board_free(m)) + ", not with best_move " + (best.is_null() ? "NULL" : chess::to_uci(best));
      const bool has_cp = cp && cp->value != "null", has_mate = mate && mate->value != "null";
      if (has_cp == has_mate) return what + ": one of cp and mate must be a number";
      const Score s = has_mate ? Score{true, static_cast<int>(flat_json_int(*mate, -kMaxMateMoves, kMaxMateMoves, what))}
                               : Score{false, static_cast<int>(flat_json_int(*cp, -kMaxCentipawns, kMaxCentipawns, what))};
      if (std::string p = stored_score_problem(position, s, (what + ": score").c_str()); !p.empty()) return p;
      if (line_pv && line_pv->value != "null") {
        if (!line_pv->quoted) return what + ": pv must be a string";
        std::vector<chess::Move> moves;
        std::size_t pos = 0;
        for (std::string_view w = next_word(line_pv->value, pos); !w.empty(); w = next_word(line_pv->value, pos)) {
          if (moves.size() > kMaxStoredPv) return what + ": pv has more than " + std::to_string(kMaxStoredPv) + " moves";
          moves.push_back(chess::parse_uci_syntax(w));
        }
        if (std::string p = stored_pv_problem(position, moves, what + ": pv"); !p.empty()) return p;
        if (moves.empty() || chess::board_free(moves.front()) != chess::board_free(m))
          return what + ": pv does not begin with its move";
      }
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  return "";
}

void PendingEvals::add(const chess::Board& position, const PositionEval& e, bool with_lines) {
  if (rows_) elements_ += ',';
  elements_ += eval_json(position, e, with_lines);
  ++rows_;
}

bool PendingEvals::due() const {
  return rows_ >= 256 || (rows_ && std::chrono::steady_clock::now() - since_ >= std::chrono::seconds(1));
}

std::string PendingEvals::take() {
  std::string out = "[" + elements_ + "]";
  elements_.clear();
  rows_ = 0;
  since_ = std::chrono::steady_clock::now();
  return out;
}

double analysis_progress(std::size_t begin, std::size_t end, std::size_t games, std::int64_t chunk_done,
                         std::size_t chunk_positions) {
  if (!games) return 1;
  const double in_chunk = chunk_positions ? double(chunk_done) / double(chunk_positions) : 1.0;
  return (double(begin) + double(end - begin) * in_chunk) / double(games);
}

std::optional<Score> score_of_pgn_eval(std::string_view text, chess::Color side_to_move) {
  if (text.empty()) return std::nullopt;
  const int sign = side_to_move == chess::kWhite ? 1 : -1;
  if (text[0] == '#') {
    std::string_view n = text.substr(1);
    const bool negative = !n.empty() && n[0] == '-';
    if (!n.empty() && (n[0] == '-' || n[0] == '+')) n = n.substr(1);
    int moves = 0;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), moves);
    if (ec != std::errc() || end != n.data() + n.size() || moves < 0 || moves > kMaxMateMoves) return std::nullopt;
    // lichess writes "#-0"/"#0" never; a mate for White is "#N" from White's view.
    const int white_view = negative ? -moves : moves;
    if (white_view == 0) return std::nullopt;
    return Score{true, sign * white_view};
  }
  double pawns = 0;
  const std::string copy(text);
  char* end = nullptr;
  pawns = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(pawns) || std::abs(pawns) * 100 > kMaxCentipawns)
    return std::nullopt;
  return Score{false, sign * int(std::lround(pawns * 100))};
}

std::vector<PgnEval> pgn_evals(const chess::Board& start, const std::vector<chess::Move>& moves,
                               const std::vector<std::string>& evals) {
  std::vector<PgnEval> out;
  chess::Board b = start;
  for (std::size_t i = 0; i < moves.size() && i < evals.size(); ++i) {
    b.play(moves[i]);
    if (evals[i].empty()) continue;
    // A position the rules decide (checkmate, stalemate, a dead draw) is what they say,
    // whatever the comment claims: a mated side never gets a winning score.
    std::optional<PositionEval> e = terminal_eval(b);
    if (!e) {
      const std::optional<Score> score = score_of_pgn_eval(evals[i], b.side);
      if (!score) continue;
      e.emplace();
      PvLine line;
      line.score = *score;
      e->lines.push_back(line);
      e->wdl = wdl_model(*score);
    }
    out.push_back({b, std::move(*e)});
  }
  return out;
}

std::string pgn_evals_json(const chess::Board& start, const std::vector<chess::Move>& moves,
                           const std::vector<std::string>& evals, int& count) {
  std::string out;
  const std::vector<PgnEval> found = pgn_evals(start, moves, evals);
  for (const PgnEval& e : found) {
    if (!out.empty()) out += ',';
    out += eval_json(e.position, e.eval, false);
  }
  count = int(found.size());
  return out;
}

std::string pgn_eval_text(const Score& s, chess::Color side_to_move) {
  const int white_view = side_to_move == chess::kWhite ? s.value : -s.value;
  if (s.mate) return "#" + std::to_string(white_view);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", white_view / 100.0);
  return buf;
}

}  // namespace pgmate::analysis
