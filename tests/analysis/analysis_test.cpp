// Engine analysis: UCI info lines read against the position, the WDL model, lichess's
// accuracy formulas against values computed by hand (a literal re-implementation of lila's
// code in Python, not this one), and the analyser with Stockfish and with engines that crash
// or lie.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/accuracy.h"
#include "analysis/analyser.h"
#include "analysis/evaluation.h"
#include "analysis/network_analyser.h"
#include "chess/fen.h"
#include "chess/notation.h"
#include "chess/pgn.h"

using namespace pgmate;
using namespace pgmate::analysis;

namespace {

const std::string kStockfish = "/usr/games/stockfish";
const std::string kFake = std::string(PGMATE_TEST_SOURCE_DIR) + "/analysis/fake_analyst.sh";
const std::string kArenaFake = std::string(PGMATE_TEST_SOURCE_DIR) + "/arena/fake_uci.sh";

bool have_stockfish() { return access(kStockfish.c_str(), X_OK) == 0; }

chess::Board start() { return chess::parse_fen("startpos"); }

}  // namespace

TEST(UciInfo, ReadsAStockfishLine) {
  const auto l = parse_info_line(
      "info depth 12 seldepth 17 multipv 2 score cp -31 wdl 20 850 130 nodes 20012 nps 900000 hashfull 3 tbhits 0 "
      "time 22 pv e2e4 e7e5 g1f3",
      start());
  ASSERT_TRUE(l);
  EXPECT_EQ(l->depth, 12);
  EXPECT_EQ(l->seldepth, 17);
  EXPECT_EQ(l->multipv, 2);
  EXPECT_EQ(l->score, (Score{false, -31}));
  ASSERT_TRUE(l->wdl);
  EXPECT_EQ(*l->wdl, (Wdl{20, 850, 130}));
  EXPECT_EQ(l->nodes, 20012);
  ASSERT_EQ(l->pv.size(), 3u);
  EXPECT_EQ(chess::to_uci(l->pv[2]), "g1f3");
}

TEST(UciInfo, LeavesOutBoundsTextAndUnscoredLines) {
  EXPECT_FALSE(parse_info_line("info depth 5 score cp 20 lowerbound nodes 10 pv e2e4", start()));
  EXPECT_FALSE(parse_info_line("info depth 5 score cp 20 upperbound pv e2e4", start()));
  EXPECT_FALSE(parse_info_line("info string NNUE evaluation using nn.nnue enabled", start()));
  EXPECT_FALSE(parse_info_line("info depth 5 currmove e2e4 currmovenumber 1", start()));
  EXPECT_FALSE(parse_info_line("info depth 5 score cp 20 nodes 10", start()));  // no PV: nothing to check it by
  EXPECT_FALSE(parse_info_line("bestmove e2e4", start()));
}

TEST(UciInfo, CutsThePvAtTheFirstIllegalMove) {
  const auto l = parse_info_line("info depth 3 score mate 2 pv e2e4 e7e5 e4e5 d1h5", start());
  ASSERT_TRUE(l);
  EXPECT_EQ(l->score, (Score{true, 2}));
  EXPECT_EQ(l->pv.size(), 2u);  // e4e5 runs into the pawn on e5
  EXPECT_FALSE(parse_info_line("info depth 3 score cp 5 pv e2e5 e7e5", start()));  // not one legal move
}

TEST(UciInfo, RefusesScoresNoEngineCouldMean) {
  EXPECT_THROW(parse_info_line("info depth 1 score mate 0 pv e2e4", start()), std::invalid_argument);
  EXPECT_THROW(parse_info_line("info depth 1 score cp 10 wdl 500 500 500 pv e2e4", start()), std::invalid_argument);
  EXPECT_THROW(parse_info_line("info depth 1 score cp 999999 pv e2e4", start()), std::invalid_argument);
  EXPECT_THROW(parse_info_line("info depth x score cp 1 pv e2e4", start()), std::invalid_argument);
  EXPECT_THROW(parse_info_line("info depth 1 score win 1 pv e2e4", start()), std::invalid_argument);
}

TEST(WdlModel, IsSymmetricSumsTo1000AndHalfAWinAtOnePawn) {
  for (int cp : {-3000, -400, -100, -1, 0, 1, 57, 100, 250, 1500}) {
    const Wdl w = wdl_model(Score{false, cp});
    EXPECT_EQ(w.win + w.draw + w.loss, 1000) << cp;
    const Wdl m = wdl_model(Score{false, -cp});
    EXPECT_EQ(w.win, m.loss) << cp;
    EXPECT_GE(w.draw, 0);
  }
  EXPECT_EQ(wdl_model(Score{false, 100}).win, 500);
  EXPECT_EQ(wdl_model(Score{true, 3}), (Wdl{1000, 0, 0}));
  EXPECT_EQ(wdl_model(Score{true, -2}), (Wdl{0, 0, 1000}));
  EXPECT_LT(wdl_model(Score{false, 50}).win, wdl_model(Score{false, 60}).win);
}

TEST(TerminalEval, CheckmateStalemateAndDeadDraws) {
  const auto mated = terminal_eval(chess::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"));
  ASSERT_TRUE(mated);
  EXPECT_EQ(mated->score(), (Score{true, 0}));
  EXPECT_EQ(mated->wdl, (Wdl{0, 0, 1000}));
  EXPECT_TRUE(mated->best.is_null());
  const auto stalemate = terminal_eval(chess::parse_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"));
  ASSERT_TRUE(stalemate);
  EXPECT_EQ(stalemate->wdl, (Wdl{0, 1000, 0}));
  EXPECT_TRUE(terminal_eval(chess::parse_fen("8/8/4k3/8/8/3K4/8/8 w - - 0 1")));  // kings only
  EXPECT_FALSE(terminal_eval(start()));
}

// An [%eval] after a move that ends the game is not believed: the rules decide the position.
TEST(PgnEvals, AGameThatEndsIsEvaluatedByTheRules) {
  const auto evals_of = [](std::string_view pgn, int& count) {
    const std::vector<chess::PgnGame> games = chess::parse_pgn(pgn);
    EXPECT_EQ(games.size(), 1u);
    return pgn_evals_json(games.at(0).start, games.at(0).moves, games.at(0).evals, count);
  };
  int count = 0;
  std::string json =
      evals_of("[White \"mated\"] [Result \"0-1\"] 1. f3 { [%eval -0.5] } e5 { [%eval -0.4] } 2. g4 { [%eval -9.9] } "
               "Qh4# { [%eval #7] } 0-1",
               count);
  EXPECT_EQ(count, 4);
  // Black to move after 1. f3: -0.50 from White's view is +50 for Black.
  EXPECT_NE(json.find("\"cp\": 50, \"mate\": null"), std::string::npos) << json;
  // White mated: mate 0, a certain loss for the side to move, not mate 7.
  const std::string last = json.substr(json.rfind("{\"board\""));
  EXPECT_NE(last.find("\"board\": \"rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\""),
            std::string::npos)
      << last;
  EXPECT_NE(last.find("\"cp\": null, \"mate\": 0, \"win\": 0, \"draw\": 0, \"loss\": 1000"), std::string::npos)
      << last;
  EXPECT_EQ(json.find("\"mate\": 7"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"mate\": -7"), std::string::npos) << json;
  // Stalemate: a draw, whatever the comment says.
  json = evals_of("[SetUp \"1\"] [FEN \"7k/8/6K1/8/8/8/8/5Q2 w - - 0 1\"] 1. Qf7 { [%eval 3.5] } 1/2-1/2", count);
  EXPECT_EQ(count, 1);
  EXPECT_NE(json.find("\"cp\": 0, \"mate\": null, \"win\": 0, \"draw\": 1000, \"loss\": 0"), std::string::npos)
      << json;
}

TEST(MakeEval, PutsTheBestMovesLineFirstAndChecksTheBestMove) {
  std::vector<PvLine> lines;
  lines.push_back(*parse_info_line("info depth 9 multipv 2 score cp 10 nodes 900 pv d2d4", start()));
  lines.push_back(*parse_info_line("info depth 9 multipv 1 score cp 30 wdl 60 900 40 nodes 1000 pv e2e4 e7e5", start()));
  const PositionEval e = make_eval(start(), lines, "e2e4");
  EXPECT_EQ(chess::to_uci(e.best), "e2e4");
  EXPECT_EQ(e.score(), (Score{false, 30}));
  EXPECT_TRUE(e.wdl_from_engine);
  EXPECT_EQ(e.wdl, (Wdl{60, 900, 40}));
  EXPECT_EQ(e.nodes, 1000);
  EXPECT_EQ(e.lines.size(), 2u);
  EXPECT_THROW(make_eval(start(), lines, "e2e5"), std::invalid_argument);
  EXPECT_THROW(make_eval(start(), {}, "e2e4"), std::invalid_argument);
  // No WDL from the engine: the model's.
  const PositionEval m = make_eval(start(), {lines[0]}, "d2d4");
  EXPECT_FALSE(m.wdl_from_engine);
  EXPECT_EQ(m.wdl, wdl_model(Score{false, 10}));
}

TEST(MakeEval, RefusesTwoLinesThatBeginWithTheSameMove) {
  std::vector<PvLine> lines;
  lines.push_back(*parse_info_line("info depth 9 multipv 1 score cp 30 pv d2d4 d7d5", start()));
  lines.push_back(*parse_info_line("info depth 9 multipv 2 score cp 10 pv e2e4", start()));
  lines.push_back(*parse_info_line("info depth 9 multipv 3 score cp 5 pv d2d4 g8f6", start()));
  try {
    make_eval(start(), lines, "d2d4");
    ADD_FAILURE() << "lines 1 and 3 begin with d2d4";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("d2d4"), std::string::npos) << e.what();
  }
  lines.pop_back();
  EXPECT_EQ(make_eval(start(), lines, "d2d4").lines.size(), 2u);
}

// What pgmate.position_evals refuses of any writer: each forged field alone, and what
// eval_json writes accepted as it is.
TEST(StoredEval, AcceptsWhatTheAnalyserWritesAndRefusesEachForgedField) {
  const chess::Board s = start();
  const auto m = [&](const char* uci) { return chess::parse_uci_syntax(uci); };
  const std::optional<Score> cp30 = Score{false, 30};
  const std::string good = R"([{"cp": 30, "pv": "e2e4 e7e5", "mate": null, "move": "e2e4"}, {"cp": 10, "pv": "d2d4", "mate": null, "move": "d2d4"}])";
  EXPECT_EQ(stored_eval_problem(s, cp30, m("e2e4"), {m("e2e4"), m("e7e5")}, good), "");
  EXPECT_EQ(stored_eval_problem(s, cp30, chess::Move(), {}, std::nullopt), "");  // a PGN comment's
  // The analyser's own JSON for a MultiPV evaluation passes as it is.
  std::vector<PvLine> lines;
  lines.push_back(*parse_info_line("info depth 9 multipv 1 score cp 30 pv e2e4 e7e5 g1f3", s));
  lines.push_back(*parse_info_line("info depth 9 multipv 2 score mate 12 pv d2d4", s));
  const std::string json = eval_json(s, make_eval(s, lines, "e2e4"), true);
  const std::string lines_json = json.substr(json.find("\"lines\": ") + 9, json.size() - json.find("\"lines\": ") - 10);
  EXPECT_EQ(stored_eval_problem(s, cp30, m("e2e4"), {m("e2e4"), m("e7e5"), m("g1f3")}, lines_json), "");

  const auto refused = [&](const std::string& problem, const char* expected) {
    EXPECT_NE(problem.find(expected), std::string::npos) << "got \"" << problem << "\", expected \"" << expected << "\"";
  };
  refused(stored_eval_problem(s, cp30, m("e2e5"), {}, std::nullopt), "best_move e2e5 is not legal");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {m("e2e4"), m("a7a1")}, std::nullopt), "pv move 2 (a7a1) is not legal");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {m("d2d4")}, std::nullopt), "pv begins with d2d4");
  refused(stored_eval_problem(s, cp30, chess::Move(), {m("d2d4")}, std::nullopt), "not with best_move NULL");
  refused(stored_eval_problem(s, Score{false, 2000000000}, m("e2e4"), {}, std::nullopt), "beyond");
  refused(stored_eval_problem(s, Score{true, 0}, m("e2e4"), {}, std::nullopt), "mate 0 in a position that is not checkmate");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"({"not": "an array"})")), "lines is not an array");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string("[]")), "lines is an empty array");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string("[1]")), "element 1 is not an object");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1}] x)")), "text after");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e5", "cp": 1}])")), "lines[1]: move \"e2e5\" is not legal");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "d2d4", "cp": 1}])")), "not with best_move e2e4");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1}, {"move": "e2e4", "cp": 0}])")),
          "lines[2]: another line already begins with e2e4");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1.5}])")), "lines[1]");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1, "mate": 2}])")), "one of cp and mate");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4"}])")), "one of cp and mate");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1, "x": 1}])")), "unknown key");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1, "pv": "e2e4 e2e4"}])")),
          "lines[1]: pv move 2 (e2e4) is not legal");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "cp": 1, "pv": "d2d4"}])")),
          "pv does not begin with its move");
  refused(stored_eval_problem(s, cp30, m("e2e4"), {}, std::string(R"([{"move": "e2e4", "mate": 0}])")), "not checkmate");
  // Checkmated: mate 0 and no move at all.
  const chess::Board mated = chess::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
  EXPECT_EQ(stored_eval_problem(mated, Score{true, 0}, chess::Move(), {}, std::nullopt), "");
  refused(stored_eval_problem(mated, Score{true, 0}, m("e2e4"), {}, std::nullopt), "best_move e2e4 is not legal");
}

TEST(NetworkEngineName, IsTheRowAndSixteenHexDigitsOfTheWeights) {
  EXPECT_EQ(network_engine_name(3, "1a2b3c4d5e6f70819999aaaabbbbcccc"), "pgmate network 3 (1a2b3c4d5e6f7081)");
}

TEST(SearchWdl, KeepsQAndDAndClampsWithoutDrawQZeroIsADraw) {
  const mcts::SearchWdl w = mcts::search_wdl(0.2, 0.5);
  EXPECT_NEAR(w.win, 0.35, 1e-12);
  EXPECT_NEAR(w.draw, 0.5, 1e-12);
  EXPECT_NEAR(w.loss, 0.15, 1e-12);
  const mcts::SearchWdl c = mcts::search_wdl(1.0, 1.5);  // a draw probability beyond 1 is clamped
  EXPECT_EQ(c.draw, 1.0);
  EXPECT_EQ(c.win, 0.5);
  EXPECT_EQ(c.loss, 0.0);
  const mcts::SearchWdl old = mcts::search_wdl(-0.25, std::nan(""));
  EXPECT_EQ(old.win, 0.0);
  EXPECT_EQ(old.draw, 0.75);
  EXPECT_EQ(old.loss, 0.25);
}

TEST(WithoutClocks, KeepsThePositionDropsTheCounters) {
  const chess::Board b = chess::parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
  const chess::Board c = without_clocks(b);
  EXPECT_EQ(chess::to_fen(c), "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 1");
  EXPECT_EQ(c.key, b.key);
}

// Values from a literal Python transcription of lila's WinPercent and AccuracyPercent.
TEST(Accuracy, LichessFormulasByHand) {
  EXPECT_DOUBLE_EQ(win_percent(0), 50);
  EXPECT_NEAR(win_percent(100), 59.10258971916128, 1e-9);
  EXPECT_NEAR(win_percent(-300), 24.88744990616516, 1e-9);
  EXPECT_NEAR(win_percent(5000), 97.54474363414323, 1e-9);  // clamped to 1000
  EXPECT_NEAR(move_accuracy(60, 40), 41.016818741417126, 1e-9);
  EXPECT_DOUBLE_EQ(move_accuracy(50, 50), 100);
  EXPECT_DOUBLE_EQ(move_accuracy(40, 60), 100);
  EXPECT_NEAR(move_accuracy(90, 10), 1.000170640274321, 1e-9);
  EXPECT_EQ(move_class(0.31), "blunder");
  EXPECT_EQ(move_class(0.3), "blunder");
  EXPECT_EQ(move_class(0.25), "mistake");
  EXPECT_EQ(move_class(0.1), "inaccuracy");
  EXPECT_EQ(move_class(0.099), "");
  // Mates, by lichess's rules (mover's view).
  EXPECT_EQ(move_class(Score{false, -750}, Score{true, -2}), "mistake");     // into a mate from -7.50
  EXPECT_EQ(move_class(Score{false, -675}, Score{true, -2}), "blunder");     // from -6.75
  EXPECT_EQ(move_class(Score{false, -1200}, Score{true, -5}), "inaccuracy");  // lost anyway
  EXPECT_EQ(move_class(Score{false, 50}, Score{true, -3}), "blunder");
  EXPECT_EQ(move_class(Score{true, 3}, Score{false, 1500}), "inaccuracy");    // the mate missed, still winning
  EXPECT_EQ(move_class(Score{true, 3}, Score{false, 800}), "mistake");
  EXPECT_EQ(move_class(Score{true, 3}, Score{false, 100}), "blunder");
  EXPECT_EQ(move_class(Score{true, 3}, Score{true, -1}), "blunder");
  EXPECT_EQ(move_class(Score{true, 3}, Score{true, 2}), "");                  // on with the mate
  EXPECT_EQ(move_class(Score{true, 1}, Score{true, 0}), "");                  // it mated
  EXPECT_EQ(move_class(Score{true, -3}, Score{true, -2}), "");                // mated anyway
  EXPECT_EQ(move_class(Score{false, 25}, Score{false, -150}), "blunder");     // centipawns: chances
  EXPECT_EQ(clamped_cp(Score{true, -4}), -1000);
  EXPECT_EQ(clamped_cp(Score{false, 1500}), 1000);
}

TEST(Accuracy, GameAccuracyByHand) {
  const std::vector<int> short_game = {20, 30, 25, -150, -140, -160, 300, 280, 290, 1000, 1000};
  GameAccuracy a = game_accuracy(short_game, true);
  ASSERT_TRUE(a.white && a.black);
  EXPECT_NEAR(a.white->accuracy, 81.34985185110608, 1e-9);
  EXPECT_NEAR(a.black->accuracy, 38.67122544636749, 1e-9);
  EXPECT_DOUBLE_EQ(a.white->acpl, 43);
  EXPECT_DOUBLE_EQ(a.black->acpl, 96);
  EXPECT_EQ(a.white->moves, 5);
  a = game_accuracy(short_game, false);  // Black moved first
  EXPECT_NEAR(a.white->accuracy, 99.87632122750409, 1e-9);
  EXPECT_NEAR(a.black->accuracy, 69.13971270512641, 1e-9);
  EXPECT_DOUBLE_EQ(a.white->acpl, 1);
  EXPECT_DOUBLE_EQ(a.black->acpl, 144);
  // 34 moves: a window of 3 positions.
  std::vector<int> longer = {15, 20, 10, 35, 30, -40, -35, -30, -300, -280, -290, -250, -600, -580};
  longer.resize(35, -1000);
  a = game_accuracy(longer, true);
  EXPECT_NEAR(a.white->accuracy, 97.9403597715196, 1e-9);
  EXPECT_NEAR(a.black->accuracy, 99.92206399845593, 1e-9);
  EXPECT_NEAR(a.white->acpl, 4.117647058823529, 1e-9);
  EXPECT_FALSE(game_accuracy({20}, true).white);
}

TEST(Analyser, StockfishFindsTheMateAndEvaluatesEveryPosition) {
  if (!have_stockfish()) GTEST_SKIP() << "no " << kStockfish;
  AnalyserConfig c;
  c.command = kStockfish;
  c.limits.nodes = 5000;
  c.jobs = 2;
  Analyser analyser(c);
  EXPECT_NE(analyser.engine_name().find("Stockfish"), std::string::npos);
  EXPECT_EQ(analyser.limits(), "nodes=5000");
  const std::vector<chess::Board> positions = {
      start(),
      chess::parse_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),                        // Rd8#
      chess::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),  // mated
      chess::parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
  };
  std::map<std::size_t, PositionEval> got;
  int ticks = 0;
  analyser.run(
      positions, [&](std::size_t i, PositionEval&& e) { got[i] = std::move(e); },
      [&](std::size_t i, const std::string& m) { ADD_FAILURE() << i << ": " << m; }, [&] { ++ticks; });
  ASSERT_EQ(got.size(), positions.size());
  EXPECT_EQ(got[1].score(), (Score{true, 1}));
  EXPECT_EQ(chess::to_uci(got[1].best), "d1d8");
  EXPECT_EQ(got[1].wdl, (Wdl{1000, 0, 0}));
  EXPECT_EQ(got[2].score(), (Score{true, 0}));
  EXPECT_TRUE(got[0].wdl_from_engine);  // Stockfish 15.1 reports WDL
  EXPECT_LT(std::abs(got[0].score().value), 100);
  EXPECT_GT(got[0].nodes, 0);
  EXPECT_LE(got[0].nodes, 6000);
  EXPECT_EQ(analyser.stats().evaluated, 4);
  EXPECT_EQ(analyser.stats().restarts, 0);
}

// An evaluation is keyed by position, engine and limits, so it must not depend on what the
// engine searched before: the positions of a game analysed in order, in reverse and by two
// jobs give the same rows, byte for byte.
TEST(Analyser, AnEvaluationDoesNotDependOnTheOrderOrTheJobs) {
  if (!have_stockfish()) GTEST_SKIP() << "no " << kStockfish;
  std::vector<chess::Board> positions;
  chess::Board b = start();
  for (const char* m : {"e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6", "c1e3", "e7e5"}) {
    positions.push_back(b);
    b.play(chess::parse_uci(b, m));
  }
  const auto analyse = [&](std::vector<std::size_t> order, int jobs) {
    AnalyserConfig c;
    c.command = kStockfish;
    c.limits.nodes = 3000;
    c.jobs = jobs;
    Analyser analyser(c);
    std::vector<chess::Board> in;
    for (std::size_t i : order) in.push_back(positions[i]);
    std::map<std::size_t, std::string> rows;
    analyser.run(
        in, [&](std::size_t i, PositionEval&& e) { rows[order[i]] = eval_json(in[i], e, true); },
        [&](std::size_t i, const std::string& m) { ADD_FAILURE() << i << ": " << m; }, [] {});
    return rows;
  };
  std::vector<std::size_t> forward(positions.size()), backward;
  for (std::size_t i = 0; i < forward.size(); ++i) forward[i] = i;
  backward.assign(forward.rbegin(), forward.rend());
  // Warm (no ucinewgame) rows are keyed apart.
  arena::UciLimits l;
  l.nodes = 3000;
  EXPECT_EQ(limits_text(l, 1, true), "nodes=3000,warm");
  EXPECT_EQ(limits_text(l, 3, false), "nodes=3000,multipv=3");
  const auto in_order = analyse(forward, 1);
  ASSERT_EQ(in_order.size(), positions.size());
  const auto reversed = analyse(backward, 1);
  const auto two_jobs = analyse(forward, 2);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    EXPECT_EQ(reversed.at(i), in_order.at(i)) << "position " << i << " in reverse order";
    EXPECT_EQ(two_jobs.at(i), in_order.at(i)) << "position " << i << " with two jobs";
  }
}

TEST(Analyser, MultiPvGivesTheLinesInOrder) {
  if (!have_stockfish()) GTEST_SKIP() << "no " << kStockfish;
  AnalyserConfig c;
  c.command = kStockfish;
  c.limits.depth = 8;
  c.multipv = 3;
  Analyser analyser(c);
  EXPECT_EQ(analyser.limits(), "depth=8,multipv=3");
  std::vector<PositionEval> got;
  analyser.run({start()}, [&](std::size_t, PositionEval&& e) { got.push_back(std::move(e)); },
               [&](std::size_t, const std::string& m) { ADD_FAILURE() << m; }, {});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].lines.size(), 3u);
  EXPECT_EQ(got[0].lines[0].pv.front(), got[0].best);
  EXPECT_NE(got[0].lines[1].pv.front(), got[0].lines[2].pv.front());
}

TEST(Analyser, ACrashedEngineIsReplacedAndItsPositionTriedAgain) {
  if (!have_stockfish()) GTEST_SKIP() << "no " << kStockfish;
  char dir[] = "/tmp/pgmate-analysis-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  const std::string flag = std::string(dir) + "/started";
  AnalyserConfig c;
  c.command = kFake + " dieonce " + flag;
  c.limits.nodes = 1000;
  Analyser analyser(c);
  int done = 0;
  analyser.run({start(), chess::parse_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")},
               [&](std::size_t, PositionEval&&) { ++done; },
               [&](std::size_t, const std::string& m) { ADD_FAILURE() << m; }, {});
  EXPECT_EQ(done, 2);
  EXPECT_EQ(analyser.stats().restarts, 1);
  std::remove(flag.c_str());
  rmdir(dir);
}

TEST(Analyser, EnginesThatLieOrHangAreGivenUpPositionByPosition) {
  struct Case {
    std::string command, says;
  } cases[] = {
      {kFake + " badscore", "mate 0"},
      {kFake + " badwdl", "does not sum to 1000"},
      {kFake + " noscore", "no scored line"},
      {kArenaFake + " illegal", "not legal here"},
      {kArenaFake + " die", "exited"},
      {kArenaFake + " hang", "did not answer"},
  };
  for (const Case& k : cases) {
    AnalyserConfig c;
    c.command = k.command;
    c.limits.nodes = 1000;
    c.jobs = 2;
    c.move_deadline = std::chrono::milliseconds(300);
    Analyser analyser(c);
    std::vector<std::string> messages;
    int done = 0;
    analyser.run({start(), chess::parse_fen("r1bqkbnr/pppppppp/2n5/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2"),
                  chess::parse_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")},
                 [&](std::size_t, PositionEval&&) { ++done; },
                 [&](std::size_t, const std::string& m) { messages.push_back(m); }, {});
    EXPECT_EQ(done, 1) << k.command;  // the stalemate needs no engine
    ASSERT_EQ(messages.size(), 2u) << k.command;
    EXPECT_NE(messages[0].find(k.says), std::string::npos) << k.command << ": " << messages[0];
    EXPECT_EQ(analyser.stats().restarts, 4) << k.command;  // two tries of each position
    EXPECT_EQ(arena::live_engine_groups(), 0) << k.command;
  }
}

// Lines that repeat a move are an answer that cannot be believed: the engine is replaced
// and the position tried again, then given up; nothing is stored.
TEST(Analyser, MultiPvLinesThatRepeatAMoveAreGivenUp) {
  AnalyserConfig c;
  c.command = kFake + " multipvdup";
  c.limits.nodes = 1000;
  c.multipv = 2;
  Analyser analyser(c);
  std::vector<std::string> messages;
  int done = 0;
  analyser.run({start(), chess::parse_fen("r1bqkbnr/pppppppp/2n5/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2")},
               [&](std::size_t, PositionEval&&) { ++done; },
               [&](std::size_t, const std::string& m) { messages.push_back(m); }, {});
  EXPECT_EQ(done, 0);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_NE(messages[0].find("both begin with e2e4"), std::string::npos) << messages[0];
  EXPECT_EQ(analyser.stats().restarts, 4);  // two tries of each position
  EXPECT_EQ(arena::live_engine_groups(), 0);
}

// An engine that never answers: the run stops after max_failures_in_a_row positions given
// up in a row, not after all of them; an evaluated position starts the count again.
TEST(Analyser, PositionsGivenUpInARowEndTheRun) {
  const chess::Board other = chess::parse_fen("r1bqkbnr/pppppppp/2n5/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2");
  const std::vector<chess::Board> hung(8, other);
  AnalyserConfig c;
  c.command = kArenaFake + " hang";
  c.limits.nodes = 1000;
  c.move_deadline = std::chrono::milliseconds(200);
  {
    Analyser analyser(c);
    std::vector<std::string> messages;
    try {
      analyser.run(hung, [&](std::size_t, PositionEval&&) { ADD_FAILURE(); },
                   [&](std::size_t, const std::string& m) { messages.push_back(m); }, {});
      ADD_FAILURE() << "the run went through every position";
    } catch (const arena::UciError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("fake-hang"), std::string::npos) << what;
      EXPECT_NE(what.find("3 positions in a row"), std::string::npos) << what;
      EXPECT_NE(what.find("did not answer within 200 ms"), std::string::npos) << what;
    }
    EXPECT_EQ(messages.size(), 3u);
    EXPECT_EQ(analyser.stats().failed, 3);
  }
  EXPECT_EQ(arena::live_engine_groups(), 0);

  // 0: no bound, every position tried.
  c.max_failures_in_a_row = 0;
  {
    Analyser analyser(c);
    int failed = 0;
    analyser.run(std::vector<chess::Board>(4, other), [&](std::size_t, PositionEval&&) { ADD_FAILURE(); },
                 [&](std::size_t, const std::string&) { ++failed; }, {});
    EXPECT_EQ(failed, 4);
  }

  // Two failures, an evaluation, two failures: never three in a row.
  c.command = kFake + " hangmost";
  c.max_failures_in_a_row = 3;
  Analyser analyser(c);
  int done = 0, failed = 0;
  analyser.run({other, other, start(), other, other, start()}, [&](std::size_t, PositionEval&&) { ++done; },
               [&](std::size_t, const std::string&) { ++failed; }, {});
  EXPECT_EQ(done, 2);
  EXPECT_EQ(failed, 4);
  c.max_failures_in_a_row = 2;
  Analyser strict(c);
  EXPECT_THROW(strict.run({other, other, start()}, [&](std::size_t, PositionEval&&) {},
                          [&](std::size_t, const std::string&) {}, {}),
               arena::UciError);
}

TEST(Analyser, AnEngineThatNeverStartsEndsTheRun) {
  AnalyserConfig c;
  c.command = "/nonexistent/engine";
  c.limits.nodes = 1;
  EXPECT_THROW(Analyser{c}, arena::UciError);
}

// ---- a network's analysis (a function standing in for the worker's network)

#include "chess/movegen.h"
#include "mcts/evaluator.h"

namespace {

// Priors that prefer captures, a value that counts material: enough to check the plumbing.
mcts::EvalResult material_eval(const mcts::EvalRequest& r) {
  mcts::EvalResult out;
  const chess::Board& b = r.history.front();
  static constexpr int kValue[] = {1, 3, 3, 5, 9, 0};
  int balance = 0;
  for (int t = 0; t < 6; ++t)
    balance += kValue[t] * (chess::popcount(b.pieces(b.side, chess::PieceType(t))) -
                            chess::popcount(b.pieces(~b.side, chess::PieceType(t))));
  const float v = std::tanh(balance / 5.0f);
  out.draw = 0.2f;
  out.win = (1 - out.draw + v) / 2;
  out.loss = 1 - out.draw - out.win;
  float total = 0;
  for (const chess::Move m : r.moves) {
    const float p = b.piece_on(m.to()) != chess::kNoPiece ? 5.0f : 1.0f;
    out.priors.push_back(p);
    total += p;
  }
  for (float& p : out.priors) p /= total;
  return out;
}

}  // namespace

TEST(NetworkAnalysis, ScoreOfValueFollowsLichessCurve) {
  EXPECT_EQ(score_of_value(0), (Score{false, 0}));
  EXPECT_EQ(score_of_value(1), (Score{false, 1000}));
  EXPECT_EQ(score_of_value(-1), (Score{false, -1000}));
  // The inverse of win%: a value v is win% 50 + 50 v.
  const Score s = score_of_value(0.3f);
  EXPECT_NEAR(win_percent(s.value), 65, 0.1);
}

TEST(NetworkAnalysis, LimitsNameTheSearch) {
  EXPECT_EQ(network_limits_text(arena::parse_player_spec("net:3:64")), "simulations=64");
  EXPECT_EQ(network_limits_text(arena::parse_player_spec("net:3:1")), "simulations=1");
  EXPECT_EQ(network_limits_text(arena::parse_player_spec("net:3:32:c_puct=2")), "simulations=32,c_puct=2");
}

TEST(NetworkAnalysis, BatchesManySearchesAndFindsTheMate) {
  mcts::FunctionEvaluator evaluator(material_eval, "material");
  NetworkAnalyserConfig config;
  config.search.simulations = 64;
  config.parallel = 4;
  NetworkAnalyser analyser(evaluator, config);
  const std::vector<chess::Board> positions = {
      start(),
      chess::parse_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),                        // Rd8#
      chess::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),  // mated
      chess::parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
      chess::parse_fen("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1"),                              // Kxd2
  };
  std::map<std::size_t, PositionEval> got;
  int ticks = 0;
  analyser.run(positions, [&](std::size_t i, PositionEval&& e) { got[i] = std::move(e); }, [&] { ++ticks; });
  ASSERT_EQ(got.size(), positions.size());
  EXPECT_EQ(got[1].score(), (Score{true, 1}));
  EXPECT_EQ(chess::to_uci(got[1].best), "d1d8");
  EXPECT_EQ(got[2].score(), (Score{true, 0}));
  EXPECT_EQ(chess::to_uci(got[4].best), "e1d2");
  for (const auto& [i, e] : got) {
    EXPECT_EQ(e.wdl.win + e.wdl.draw + e.wdl.loss, 1000) << i;
    if (i != 2) EXPECT_EQ(e.nodes, 64) << i;
  }
  // Leaves of several searches share a batch: fewer batches than evaluations.
  EXPECT_LT(evaluator.batches() * 2, analyser.evaluations());
  EXPECT_GT(ticks, 0);
}

TEST(NetworkAnalysis, OneSimulationIsThePolicysTopMove) {
  mcts::FunctionEvaluator evaluator(material_eval, "material");
  NetworkAnalyserConfig config;
  config.search.simulations = 1;
  NetworkAnalyser analyser(evaluator, config);
  std::vector<PositionEval> got;
  // The only capture has the highest prior.
  analyser.run({chess::parse_fen("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1")},
               [&](std::size_t, PositionEval&& e) { got.push_back(std::move(e)); }, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(chess::to_uci(got[0].best), "e1d2");
  EXPECT_EQ(analyser.evaluations(), 1);
  // One evaluation of a queen down: the network's own value.
  EXPECT_LT(got[0].score().value, -500);
}
