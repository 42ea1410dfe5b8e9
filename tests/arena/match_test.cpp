// Arena: player specs, matches between random, pure MCTS and UCI engines (Stockfish and
// misbehaving fakes), openings.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "arena/match.h"
#include "arena/openings.h"
#include "arena/player_spec.h"
#include "arena/uci_engine.h"
#include "chess/fen.h"
#include "chess/game.h"
#include "chess/notation.h"
#include "common/json.h"
#include "common/text.h"

namespace pgmate::arena {
namespace {

const std::string kFakeEngine = std::string(PGMATE_TEST_SOURCE_DIR) + "/arena/fake_uci.sh";
const std::string kStockfish = "/usr/games/stockfish";

std::string spec_error(const std::string& text) {
  try {
    parse_player_spec(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PlayerSpec, ShorthandAndJsonAgree) {
  EXPECT_EQ(to_json(parse_player_spec("mcts:200")), to_json(parse_player_spec(R"({"type": "mcts", "simulations": 200})")));
  EXPECT_EQ(to_json(parse_player_spec("net:3:100:c_puct=2")),
            to_json(parse_player_spec(R"({"type":"net","network":3,"simulations":100,"c_puct":2})")));
  EXPECT_EQ(to_json(parse_player_spec("uci:/usr/games/stockfish:nodes=1000,Skill Level=0")),
            to_json(parse_player_spec(R"({"type":"uci","command":"/usr/games/stockfish","nodes":1000,"Skill Level":0})")));
  EXPECT_EQ(to_json(parse_player_spec("random")), R"({"type": "random"})");
  // Resolved: every search setting is spelled out, noise off and temperature 0 by default.
  EXPECT_EQ(to_json(parse_player_spec("mcts:200")),
            R"({"type": "mcts", "simulations": 200, "c_puct": 1.5, "fpu_reduction": 0.25, "fpu_reduction_root": 0.25, )"
            R"("noise": false, "temperature": 0, "temperature_plies": 0})");
  EXPECT_EQ(to_json(parse_player_spec("uci:sf")), R"({"type": "uci", "command": "sf", "movetime": 100})");
  for (const char* text : {"random", "mcts:200", "net:3:1:temperature=1,temperature_plies=8", "uci:sf:depth=3,Hash=16"}) {
    SCOPED_TRACE(text);
    const std::string json = to_json(parse_player_spec(text));
    EXPECT_EQ(to_json(parse_player_spec(json)), json);  // the stored form reads back as itself
  }
  EXPECT_EQ(display_name(parse_player_spec("net:3:100:c_puct=2")), "net:3:100:c_puct=2");
  EXPECT_EQ(display_name(parse_player_spec("uci:/usr/games/stockfish:nodes=1000,Skill Level=0")),
            "uci:stockfish:nodes=1000,Skill Level=0");
  EXPECT_EQ(display_name(parse_player_spec("mcts:50")), "mcts:50");
  // Gumbel root search: spelled out only for Gumbel players, so PUCT specs read as before.
  const PlayerSpec gumbel = parse_player_spec("net:3:16:search=gumbel,gumbel_considered=8");
  EXPECT_EQ(gumbel.search.root_search, mcts::RootSearch::kGumbel);
  EXPECT_EQ(gumbel.search.gumbel_considered, 8);
  EXPECT_EQ(to_json(parse_player_spec(to_json(gumbel))), to_json(gumbel));
  EXPECT_NE(to_json(gumbel).find(
                R"("search": "gumbel", "gumbel_considered": 8, "c_visit": 50, "c_scale": 0.1, "q_normalise": "minmax")"),
            std::string::npos)
      << to_json(gumbel);
  // The paper's normalisation takes its own scale, unless one is given.
  const PlayerSpec paper = parse_player_spec("net:3:16:search=gumbel,q_normalise=bounds");
  EXPECT_EQ(paper.search.gumbel_q_normalise, mcts::QNormalise::kBounds);
  EXPECT_FLOAT_EQ(paper.search.gumbel_c_scale, 1.0f);
  EXPECT_EQ(display_name(paper), "net:3:16:search=gumbel,q_normalise=bounds");
  EXPECT_EQ(to_json(parse_player_spec(to_json(paper))), to_json(paper));
  EXPECT_FLOAT_EQ(parse_player_spec("net:3:16:search=gumbel,c_scale=2,q_normalise=bounds").search.gumbel_c_scale, 2.0f);
  EXPECT_EQ(display_name(parse_player_spec("net:3:16:search=gumbel,c_scale=2")), "net:3:16:search=gumbel,c_scale=2");
  EXPECT_NE(spec_error("net:3:16:search=gumbel,q_normalise=zscore").find("bounds or minmax"), std::string::npos);
  EXPECT_EQ(to_json(parse_player_spec("net:3:16:search=puct")), to_json(parse_player_spec("net:3:16")));
  EXPECT_EQ(display_name(gumbel), "net:3:16:search=gumbel,gumbel_considered=8");
  EXPECT_NE(spec_error("mcts:10:search=alphabeta").find("puct or gumbel"), std::string::npos)
      << spec_error("mcts:10:search=alphabeta");
}

TEST(PlayerSpec, BadSpecsNameTheProblem) {
  EXPECT_NE(spec_error("mcts:x").find("simulations"), std::string::npos) << spec_error("mcts:x");
  EXPECT_NE(spec_error("mcts:x").find("\"mcts:x\""), std::string::npos);
  EXPECT_NE(spec_error("mcts").find("needs \"simulations\""), std::string::npos) << spec_error("mcts");
  EXPECT_NE(spec_error("net:0:10").find("network"), std::string::npos);
  EXPECT_NE(spec_error("net:3").find("simulations"), std::string::npos);
  EXPECT_NE(spec_error("mcts:10:depth=3").find("unknown key \"depth\""), std::string::npos) << spec_error("mcts:10:depth=3");
  EXPECT_NE(spec_error("mcts:10:c_puct=-1").find("c_puct"), std::string::npos);
  EXPECT_NE(spec_error("random:3").find("no settings"), std::string::npos);
  EXPECT_NE(spec_error("alphazero").find("unknown player"), std::string::npos);
  EXPECT_NE(spec_error("uci:").find("needs \"command\""), std::string::npos) << spec_error("uci:");
  EXPECT_NE(spec_error(R"({"type": "uci", "command": "  "})").find("empty"), std::string::npos);
  EXPECT_NE(spec_error("uci:sf:nodes=0").find("nodes"), std::string::npos);
  EXPECT_NE(spec_error("uci:sf:Hash").find("KEY=VALUE"), std::string::npos);
  EXPECT_NE(spec_error(R"({"type": "uci"})").find("command"), std::string::npos);
  EXPECT_NE(spec_error(R"({"simulations": 3})").find("\"type\" is missing"), std::string::npos);
  EXPECT_NE(spec_error(R"({"type": "mcts", "simulations": {"a": 1}})").find("nested"), std::string::npos);
}

std::vector<std::int64_t> first(int n) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// Plays a match and checks every game: legal moves from the opening, a result that the
// final position or the termination explains, colours alternating within pairs.
std::vector<MatchGame> play(const std::string& a, const std::string& b, int games, MatchConfig config = {},
                            std::vector<Opening> openings = start_position_opening()) {
  MatchRunner runner(config, parse_player_spec(a), parse_player_spec(b), openings);
  std::vector<MatchGame> out;
  runner.run(first(games), [&](MatchGame& g) { out.push_back(g); });
  EXPECT_EQ(int(out.size()), games);
  EXPECT_EQ(runner.stats().games_done, games);
  for (const MatchGame& g : out) {
    SCOPED_TRACE("game " + std::to_string(g.index) + ": " + g.termination);
    EXPECT_EQ(g.pair, g.index / 2);
    EXPECT_EQ(g.a_white, g.index % 2 == 0);
    chess::Game replay(g.start);
    bool legal = true;
    for (chess::Move m : g.moves) {
      legal = chess::is_legal(replay.board(), m);
      EXPECT_TRUE(legal) << chess::to_uci(m);
      if (!legal) break;
      replay.play(m);
    }
    if (!legal) continue;
    const chess::GameStatus status = replay.status();
    if (g.termination == "max_plies") {
      EXPECT_EQ(g.result, "1/2-1/2");
      EXPECT_EQ(int(g.moves.size()), config.max_plies);
    } else if (g.termination.rfind("forfeit", 0) != 0 && g.termination != "resignation") {
      EXPECT_EQ(g.termination, chess::status_name(status));
      if (status == chess::GameStatus::kCheckmate)
        EXPECT_EQ(g.result, replay.board().side == chess::kWhite ? "0-1" : "1-0");
      else
        EXPECT_EQ(g.result, "1/2-1/2");
    }
  }
  return out;
}

double a_score(const std::vector<MatchGame>& games) {
  double s = 0;
  for (const auto& g : games) s += g.a_score();
  return s;
}

TEST(Match, RandomAgainstRandomPlaysLegalPairedGames) {
  MatchConfig config;
  config.parallel = 5;
  config.max_plies = 120;
  config.seed = 3;
  const auto games = play("random", "random", 12, config);
  // Seeded: the same match again is the same games.
  MatchRunner again(config, parse_player_spec("random"), parse_player_spec("random"), start_position_opening());
  std::map<std::int64_t, std::vector<chess::Move>> moves;
  again.run(first(12), [&](MatchGame& g) { moves[g.index] = g.moves; });
  for (const auto& g : games) EXPECT_EQ(moves[g.index], g.moves);
}

TEST(Match, OpeningsArePlayedTwiceWithColoursSwapped) {
  const std::string pgn = "[ECO \"C20\"]\n[Opening \"King's pawn\"]\n\n1. e4 e5 *\n\n[ECO \"A40\"]\n\n1. d4 *\n";
  auto openings = parse_pgn_openings(pgn);
  ASSERT_EQ(openings.size(), 2u);
  EXPECT_EQ(openings[0].name, "C20 King's pawn");
  MatchConfig config;
  config.max_plies = 40;
  const auto games = play("random", "random", 8, config, openings);
  for (const auto& g : games) {
    const Opening& o = openings[std::size_t(g.pair) % 2];
    EXPECT_EQ(g.opening, o.name);
    ASSERT_GE(g.moves.size(), o.moves.size());
    EXPECT_TRUE(std::equal(o.moves.begin(), o.moves.end(), g.moves.begin()));
    EXPECT_EQ(g.opening_plies, int(o.moves.size()));
  }
  const auto epd = parse_epd_openings(
      "# two lines\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n\n8/8/8/8/8/8/k7/7K w - -\n");
  ASSERT_EQ(epd.size(), 2u);
  EXPECT_EQ(epd[0].name, "e4");
  EXPECT_EQ(epd[1].name, "line 4");
  EXPECT_THROW(parse_epd_openings("not a fen at all\n"), std::invalid_argument);
  auto shuffled = epd;
  shuffle_openings(shuffled, 1);
  EXPECT_EQ(shuffled.size(), 2u);
}

// Two ECO lines end in mate. A game from such an opening is over before anyone moves, also
// when it starts in the place of a finished game (one game at a time here: every game but
// the first does); no search is ever started on it.
TEST(Match, AnOpeningThatEndsTheGameIsOverAtOnce) {
  const auto openings = parse_pgn_openings("[Opening \"quiet\"]\n\n1. e4 *\n\n[Opening \"mated\"]\n\n1. f3 e5 2. g4 Qh4# *\n");
  ASSERT_EQ(openings.size(), 2u);
  MatchConfig config;
  config.parallel = 1;
  config.max_plies = 16;
  const auto games = play("mcts:8", "random", 6, config, openings);
  int mated = 0;
  for (const auto& g : games) {
    if (g.pair % 2 == 0) continue;
    ++mated;
    EXPECT_EQ(g.termination, "checkmate");
    EXPECT_EQ(g.result, "0-1");
    EXPECT_EQ(g.moves.size(), 4u);
  }
  EXPECT_EQ(mated, 2);
}

TEST(Match, PureMctsBeatsRandom) {
  MatchConfig config;
  config.parallel = 8;
  config.max_plies = 200;
  const auto games = play("mcts:100", "random", 8, config);
  EXPECT_GE(a_score(games), 6.5) << "mcts:100 should beat random";
}

// The Gumbel root plays legal games too, and with a small budget still beats random.
TEST(Match, GumbelMctsBeatsRandom) {
  MatchConfig config;
  config.parallel = 8;
  config.max_plies = 200;
  const auto games = play("mcts:32:search=gumbel", "random", 8, config);
  EXPECT_GE(a_score(games), 6.5) << "mcts:32:search=gumbel should beat random";
}

bool have_stockfish() { return std::filesystem::exists(kStockfish); }

TEST(Match, StockfishBeatsRandomAndSpeaksUci) {
  if (!have_stockfish()) GTEST_SKIP() << kStockfish << " is not installed";
  MatchConfig config;
  config.parallel = 2;
  config.max_plies = 300;
  const auto games = play("uci:" + kStockfish + ":nodes=2000", "random", 4, config);
  EXPECT_EQ(a_score(games), 4.0);
  for (const auto& g : games) EXPECT_EQ(g.termination, "checkmate");
}

TEST(Match, MisbehavingEnginesForfeit) {
  MatchConfig config;
  config.parallel = 2;
  config.max_plies = 60;
  config.uci_move_deadline = std::chrono::milliseconds(300);
  for (const char* mode : {"illegal", "hang", "die"}) {
    SCOPED_TRACE(mode);
    const auto t0 = std::chrono::steady_clock::now();
    const auto games = play("uci:/bin/sh " + kFakeEngine + " " + mode, "random", 2, config);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
    for (const auto& g : games) {
      EXPECT_EQ(g.termination.rfind("forfeit: ", 0), 0u) << g.termination;
      EXPECT_EQ(g.a_score(), 0.0);
      std::printf("%s: %s\n", mode, g.termination.c_str());
    }
  }
}

TEST(Match, EnginesThatCannotStartFailTheMatchClearly) {
  MatchConfig config;
  config.uci_start_timeout = std::chrono::milliseconds(1000);
  const auto error_of = [&](const std::string& spec) -> std::string {
    try {
      MatchRunner runner(config, parse_player_spec(spec), parse_player_spec("random"), start_position_opening());
      runner.run(first(2), [](MatchGame&) {});
    } catch (const UciError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("uci:/nonexistent/engine").find("cannot be started"), std::string::npos)
      << error_of("uci:/nonexistent/engine");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string mute = error_of("uci:/bin/sh " + kFakeEngine + " mute");
  EXPECT_NE(mute.find("did not answer \"uci\""), std::string::npos) << mute;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  // It exits at once: seen either when its input is written or when its answer is read.
  const std::string gone = error_of("uci:/bin/false");
  EXPECT_TRUE(gone.find("exited") != std::string::npos || gone.find("stopped reading its input") != std::string::npos)
      << gone;
  EXPECT_THROW(MatchRunner(config, parse_player_spec("net:1:10"), parse_player_spec("random"), start_position_opening()),
               std::invalid_argument);
}


// ---- engines that misbehave on purpose: floods, deaf engines, wrapper scripts, stray
// descriptors, text that is not UTF-8

using Clock = std::chrono::steady_clock;

std::string fake(const std::string& mode) { return "/bin/sh " + kFakeEngine + " " + mode; }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs f; a regression here is a hang, so past `limit` the engines are killed and the
// test program ends with a message instead of blocking the suite.
template <class F>
void within(std::chrono::seconds limit, F&& f) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, limit, [&] { return done; })) {
      std::fprintf(stderr, "hung for %lld s: killing the engines and giving up\n", (long long)limit.count());
      kill_live_engine_groups();
      std::_Exit(1);
    }
  });
  try {
    f();
  } catch (...) {
    { std::lock_guard lock(m); done = true; }
    cv.notify_all();
    watchdog.join();
    throw;
  }
  { std::lock_guard lock(m); done = true; }
  cv.notify_all();
  watchdog.join();
}

struct Stopped {};  // what the interrupt checks below throw

// An interrupt check that fires once `after` has passed, counting its calls.
InterruptCheck interrupt_after(std::chrono::milliseconds after, int* calls = nullptr) {
  const auto at = Clock::now() + after;
  return [at, calls] {
    if (calls) ++*calls;
    if (Clock::now() >= at) throw Stopped{};
  };
}

std::string start_error(const std::string& command, std::chrono::milliseconds timeout,
                        const std::vector<std::pair<std::string, std::string>>& options = {}) {
  try {
    UciEngine engine(command, options, timeout);
  } catch (const UciError& e) {
    return e.what();
  }
  return "";
}

bool valid_utf8_without_controls(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_char_length(s, i);
    if (n == 0 || static_cast<unsigned char>(s[i]) < 0x20) return false;
    i += n;
  }
  return true;
}

// A process group with no running process left in it (zombies wait for whoever reaps
// orphans, which may take a while).
bool group_gone(pid_t group) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const std::size_t close = stat.rfind(')');  // the program's name may hold anything
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgid) == 3 && pgid == group && state != 'Z')
      return false;
  }
  return true;
}

// Processes whose parent is this one, zombies included.
int children_of_this_process() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const std::size_t close = stat.rfind(')');
    char state = 0;
    long ppid = 0;
    if (close != std::string::npos && std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 &&
        ppid == getpid())
      ++n;
  }
  return n;
}

bool wait_group_gone(pid_t group, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (!group_gone(group)) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Lines arriving without end during the handshake: the start deadline still holds, and
// the message gives the start timeout, not what was left of it.
TEST(UciEngine, AHandshakeFloodEndsAtTheStartDeadline) {
  within(std::chrono::seconds(30), [] {
    for (const char* mode : {"hsflood", "slowflood"}) {
      SCOPED_TRACE(mode);
      const auto t0 = Clock::now();
      const std::string error = start_error(fake(mode), std::chrono::milliseconds(1000));
      EXPECT_LT(seconds_since(t0), 2.5);
      EXPECT_NE(error.find("did not answer \"uci\" within 1000 ms"), std::string::npos) << error;
    }
  });
}

// The caller's interrupt check runs while an engine floods, so a cancel ends the wait
// long before the engine's own deadline.
TEST(UciEngine, AnInterruptEndsAFloodingHandshake) {
  within(std::chrono::seconds(30), [] {
    const auto t0 = Clock::now();
    int calls = 0;
    EXPECT_THROW(UciEngine(fake("hsflood"), {}, std::chrono::seconds(60), interrupt_after(std::chrono::milliseconds(300), &calls)),
                 Stopped);
    EXPECT_LT(seconds_since(t0), 2.0);
    EXPECT_GT(calls, 1);
    EXPECT_EQ(live_engine_groups(), 0);
  });
}

// An engine that floods info lines after go loses the game at its move deadline; with an
// interrupt check, the match stops when asked, whatever the flood.
TEST(UciEngine, AnInfoFloodForfeitsOrIsInterrupted) {
  within(std::chrono::seconds(60), [] {
    MatchConfig config;
    config.parallel = 2;
    config.max_plies = 20;
    config.uci_move_deadline = std::chrono::milliseconds(500);
    auto t0 = Clock::now();
    const auto games = play("uci:" + fake("flood"), "random", 2, config);
    EXPECT_LT(seconds_since(t0), 8.0);
    for (const auto& g : games) EXPECT_NE(g.termination.find("gave no move within 500 ms"), std::string::npos) << g.termination;

    config.uci_move_deadline = std::chrono::seconds(60);
    config.interrupt_check = interrupt_after(std::chrono::milliseconds(500));
    t0 = Clock::now();
    EXPECT_THROW(
        {
          MatchRunner runner(config, parse_player_spec("uci:" + fake("flood")), parse_player_spec("random"),
                             start_position_opening());
          runner.run(first(2), [](MatchGame&) {});
        },
        Stopped);
    EXPECT_LT(seconds_since(t0), 2.5);  // the interrupt, and every engine stopped
    EXPECT_EQ(live_engine_groups(), 0);
  });
}

// An engine that stops reading: writes do not block. Options beyond a pipe's 64 KiB fail
// at the start deadline; a long position line gives way to an interrupt.
TEST(UciEngine, AnEngineThatStopsReadingCannotBlockWrites) {
  within(std::chrono::seconds(30), [] {
    auto t0 = Clock::now();
    const std::string error =
        start_error(fake("deaf"), std::chrono::milliseconds(1000),
                    {{"OptA", std::string(40000, 'x')}, {"OptB", std::string(40000, 'y')}, {"OptC", std::string(40000, 'z')}});
    EXPECT_LT(seconds_since(t0), 2.5);
    EXPECT_NE(error.find("stopped reading its input"), std::string::npos) << error;

    UciEngine engine(fake("deafmove"), {}, std::chrono::seconds(5), interrupt_after(std::chrono::milliseconds(1500)));
    const chess::Board start = chess::parse_fen("startpos");
    std::vector<chess::Move> moves;
    const chess::Move knight_out = chess::parse_uci(start, "g1f3");
    for (int i = 0; i < 20000; ++i) moves.push_back(knight_out);  // about 100 KB of "position ... moves"
    t0 = Clock::now();
    EXPECT_THROW(engine.go(start, moves, UciLimits{}), Stopped);
    EXPECT_LT(seconds_since(t0), 2.5);
  });
}

// A wrapper script's children are in the engine's process group and go with it; so do the
// engines of a match, in parallel.
TEST(UciEngine, TheWholeProcessGroupIsStopped) {
  within(std::chrono::seconds(30), [] {
    pid_t group;
    {
      UciEngine engine(fake("wrapper"), {}, std::chrono::seconds(5));
      group = engine.pid();
      EXPECT_EQ(live_engine_groups(), 1);
      engine.go(chess::parse_fen("startpos"), {}, UciLimits{});  // now stuck in a sleep
    }
    EXPECT_TRUE(wait_group_gone(group, std::chrono::milliseconds(500))) << "a process of group " << group << " is left";
    EXPECT_EQ(live_engine_groups(), 0);

    // The registry's kill, for a process that ends without unwinding.
    {
      UciEngine engine(fake("wrapper"), {}, std::chrono::seconds(5));
      group = engine.pid();
      kill_live_engine_groups();
      EXPECT_THROW(engine.poll_bestmove(std::chrono::milliseconds(2000)), UciError);  // it died
      EXPECT_TRUE(wait_group_gone(group, std::chrono::milliseconds(500)));
    }

    // Eight stuck engines stop within about one second of grace together.
    MatchConfig config;
    config.parallel = 8;
    config.interrupt_check = interrupt_after(std::chrono::milliseconds(500));
    const auto t0 = Clock::now();
    EXPECT_THROW(
        {
          MatchRunner runner(config, parse_player_spec("uci:" + fake("stuck")), parse_player_spec("random"),
                             start_position_opening());
          runner.run(first(8), [](MatchGame&) {});
        },
        Stopped);
    EXPECT_LT(seconds_since(t0), 3.0);
    EXPECT_EQ(live_engine_groups(), 0);
  });
}

// A descendant that leaves the engine's group (setsid) and is orphaned comes to this
// process, the engines' subreaper, and is killed and reaped when the engine stops.
TEST(UciEngine, ADescendantInASessionOfItsOwnIsStoppedToo) {
  const std::string file =
      (std::filesystem::temp_directory_path() / ("pgmate-setsid-" + std::to_string(getpid()))).string();
  std::filesystem::remove(file);
  pid_t orphan = 0;
  within(std::chrono::seconds(30), [&] {
    {
      UciEngine engine(fake("setsid") + " " + file, {}, std::chrono::seconds(5));
      for (const auto until = Clock::now() + std::chrono::seconds(5); orphan <= 0 && Clock::now() < until;) {
        std::ifstream in(file);
        if (!(in >> orphan)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      ASSERT_GT(orphan, 0) << "no pid in " << file;
      ASSERT_EQ(kill(orphan, 0), 0);
    }
    const auto until = Clock::now() + std::chrono::seconds(2);
    while (kill(orphan, 0) == 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    errno = 0;
    EXPECT_NE(kill(orphan, 0), 0) << "process " << orphan << " outlived its engine";
    EXPECT_EQ(errno, ESRCH);
    // The wrapper's sleep, orphaned by the group's kill, comes here too: reaped, not left a zombie.
    { UciEngine engine(fake("wrapper"), {}, std::chrono::seconds(5)); }
    EXPECT_EQ(children_of_this_process(), 0);
    EXPECT_EQ(live_engine_groups(), 0);
  });
  if (orphan > 0 && kill(orphan, 0) == 0) kill(orphan, SIGKILL);
  std::filesystem::remove(file);
}

// An engine inherits its pipes and /dev/null, never the caller's files or sockets (a
// backend's client connection, its data files).
TEST(UciEngine, AnEngineInheritsNoOtherDescriptor) {
  const std::string path = (std::filesystem::temp_directory_path() / ("pgmate-fd-" + std::to_string(getpid()))).string();
  const int file = open(path.c_str(), O_CREAT | O_RDWR, 0600);  // without O_CLOEXEC on purpose
  ASSERT_GE(file, 0);
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  within(std::chrono::seconds(30), [&] {
    UciEngine engine(fake("fds"), {}, std::chrono::seconds(5));
    engine.go(chess::parse_fen("startpos"), {}, UciLimits{});
    ASSERT_TRUE(engine.poll_bestmove(std::chrono::milliseconds(5000)).has_value());
    std::string listing;
    for (const std::string& line : engine.last_lines()) listing += line + "\n";
    EXPECT_NE(listing.find("fd 0 pipe:"), std::string::npos) << listing;
    EXPECT_NE(listing.find("fd 2 /dev/null"), std::string::npos) << listing;
    EXPECT_EQ(listing.find(path), std::string::npos) << listing;
    EXPECT_EQ(listing.find("socket:"), std::string::npos) << listing;
  });
  close(sockets[0]);
  close(sockets[1]);
  close(file);
  std::filesystem::remove(path);
}

// A move's deadline follows its limits: the least allowance of those given, since the
// engine stops at the first it reaches.
TEST(UciEngine, TheMoveDeadlineFollowsTheLimits) {
  using std::chrono::milliseconds;
  const auto deadline = [](std::int64_t nodes, int depth, std::int64_t movetime) {
    return UciEngine::move_deadline(UciLimits{.nodes = nodes, .movetime_ms = movetime, .depth = depth});
  };
  EXPECT_EQ(deadline(0, 0, 1000), milliseconds(7000));  // twice the time and 5 s, as before
  EXPECT_EQ(deadline(0, 0, 0), milliseconds(60000));
  // Nodes at 10,000 a second after 60 s: 50 million (75 s for Stockfish here) are not cut short.
  EXPECT_EQ(deadline(1000, 0, 0), milliseconds(60100));
  EXPECT_EQ(deadline(50000000, 0, 0), milliseconds(60000 + 5000000));
  // Depth: 2 minutes to depth 20, doubling every 3 plies beyond.
  EXPECT_EQ(deadline(0, 8, 0), milliseconds(120000));
  EXPECT_EQ(deadline(0, 20, 0), milliseconds(120000));
  EXPECT_EQ(deadline(0, 23, 0), milliseconds(240000));
  EXPECT_EQ(deadline(0, 26, 0), milliseconds(480000));
  EXPECT_GT(deadline(0, 40, 0), milliseconds(3 * 3600 * 1000));
  EXPECT_LT(deadline(0, 24, 0), deadline(0, 25, 0));
  // Several limits: the least.
  EXPECT_EQ(deadline(1000, 0, 1000), milliseconds(7000));
  EXPECT_EQ(deadline(50000000, 20, 0), milliseconds(120000));
  EXPECT_EQ(deadline(1000, 30, 0), milliseconds(60100));
  EXPECT_EQ(deadline(50000000, 30, 600000), milliseconds(1205000));
  // The largest limits are capped at 30 days, without overflow.
  const milliseconds month = std::chrono::hours(24 * 30);
  EXPECT_EQ(deadline(std::int64_t(1) << 40, 0, 0), month);
  EXPECT_EQ(deadline(INT64_MAX, 0, 0), month);
  EXPECT_EQ(deadline(0, 255, 0), month);
  EXPECT_EQ(deadline(0, 0, INT64_MAX), month);
}

TEST(EngineText, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(escape_text("Evil\xff\xfe" "Engine"), "Evil\\xff\\xfeEngine");
  EXPECT_EQ(escape_text("caf\xc3\xa9 \xe2\x99\x9e"), "caf\xc3\xa9 \xe2\x99\x9e");  // valid UTF-8 unchanged
  EXPECT_EQ(escape_text(std::string("a\0b\tc", 5)), "a\\x00b\\x09c");
  EXPECT_EQ(escape_text("\xc3"), "\\xc3");  // a character cut short
  EXPECT_EQ(escape_text(escape_text("x\xff")), escape_text("x\xff"));
  EXPECT_EQ(escape_text("abcdef", 3), "abc...");
  EXPECT_EQ(json_string("a\xff\"\xc3\xa9"), "\"a\\\\xff\\\"\xc3\xa9\"");
  EXPECT_TRUE(valid_utf8_without_controls(json_string("\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf")));
}

// An engine's name and its moves are quoted into forfeit messages: as valid UTF-8, so the
// games can be stored, shown and dumped.
TEST(UciEngine, EngineTextThatIsNotUtf8IsEscapedInForfeits) {
  within(std::chrono::seconds(30), [] {
    MatchConfig config;
    config.parallel = 1;
    config.max_plies = 20;
    const auto badname = play("uci:" + fake("badname"), "random", 2, config);
    const auto badmove = play("uci:" + fake("badmove"), "random", 2, config);
    for (const auto* games : {&badname, &badmove})
      for (const auto& g : *games) {
        EXPECT_EQ(g.termination.rfind("forfeit: ", 0), 0u) << g.termination;
        EXPECT_TRUE(valid_utf8_without_controls(g.termination)) << g.termination;
      }
    EXPECT_NE(badname[0].termination.find("Evil\\xff\\xfeEngine"), std::string::npos) << badname[0].termination;
    EXPECT_NE(badmove[0].termination.find("illegal move \"\\xff\\xfe\""), std::string::npos) << badmove[0].termination;
  });
}

}  // namespace
}  // namespace pgmate::arena
