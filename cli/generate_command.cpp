// pgmate generate: a synthetic game corpus (core's chess::generate_game) as PGN, for
// database benchmarks. Game i depends on (seed, i) alone, so the games are made on every
// core, in chunks, and written in game order: the same command writes the same bytes on
// any number of threads, and --games 10 writes the first games of --games 100.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "args.h"
#include "chess/game_generator.h"
#include "chess/lichess_format.h"
#include "commands.h"
#include "import.h"
#include "progress.h"

namespace pgmate::cli {

const char* const kGenerateUsage =
    "pgmate generate --games N --seed S [--out FILE.pgn|- | --db CONNINFO] [--book FILE.bin] [--threads T] [--lichess]";

namespace {

using Clock = std::chrono::steady_clock;

// Games made and handed out together: large enough to amortise the hand-over, small
// enough that the threads finish together.
constexpr std::int64_t kChunkGames = 64;

struct Options {
  std::int64_t games = 0;
  std::uint64_t seed = 0;
  bool seeded = false;
  std::string out = "-";
  std::string db;  // --db: into pgmate.games through the importer, instead of --out
  bool to_db = false;
  std::string book = std::string(chess::kDefaultBookPath);
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  bool lichess = false;  // as lichess's database exports games (chess/lichess_format.h)
};

std::uint64_t parse_u64(const std::string& text, const std::string& option) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError(option + " must be an unsigned 64-bit integer, not \"" + text + "\"");
  return value;
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  bool counted = false, out_given = false;
  const int max_threads = int(std::max(1u, std::thread::hardware_concurrency())) * 4;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--games") o.games = parse_count(value(), "--games", 1, 1000000000), counted = true;
    else if (a == "--seed") o.seed = parse_u64(value(), "--seed"), o.seeded = true;
    else if (a == "--out") o.out = value(), out_given = true;
    else if (a == "--db") o.db = value(), o.to_db = true;
    else if (a == "--book") o.book = value();
    else if (a == "--threads") o.threads = parse_count(value(), "--threads", 1, max_threads);
    else if (a == "--lichess") o.lichess = true;
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option " + a);
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (!counted) throw UsageError("--games N is required: how many games to generate");
  if (!o.seeded) throw UsageError("--seed S is required: the corpus is the one its seed names");
  if (o.out.empty()) throw UsageError("--out needs a file name (- for standard output)");
  if (o.to_db && out_given) throw UsageError("--out and --db: one or the other");
  if (o.book.empty()) throw UsageError("--book needs a file name");
  return o;
}

// Results counted as the games are written.
struct Tally {
  std::int64_t games = 0, white = 0, draws = 0, black = 0, plies = 0;
  void add(const chess::GeneratedGame& g) {
    ++games;
    plies += std::int64_t(g.moves.size());
    if (g.result == "1-0") ++white;
    else if (g.result == "0-1") ++black;
    else ++draws;
  }
  void add(const Tally& t) {
    games += t.games, white += t.white, draws += t.draws, black += t.black, plies += t.plies;
  }
};

// Where the games go, in game order, a chunk of PGN text at a time (games separated by
// a blank line, as PGN files are).
class GameSink {
 public:
  virtual ~GameSink() = default;
  virtual void write(std::string_view pgn) = 0;
  virtual void finish() = 0;
  virtual std::string name() const = 0;
};

class PgnFileSink : public GameSink {
 public:
  explicit PgnFileSink(const std::string& path) : name_(path == "-" ? "standard output" : path) {
    if (path == "-") {
      file_ = stdout;
    } else {
      file_ = std::fopen(path.c_str(), "w");
      if (!file_) throw UsageError("cannot write --out " + path + ": " + std::strerror(errno));
      owned_ = true;
    }
  }
  ~PgnFileSink() override {
    if (owned_) std::fclose(file_);
  }
  void write(std::string_view pgn) override {
    if (std::fwrite(pgn.data(), 1, pgn.size(), file_) != pgn.size()) fail();
  }
  void finish() override {
    if (std::fflush(file_) != 0) fail();
  }
  std::string name() const override { return name_; }

 private:
  [[noreturn]] void fail() { throw std::runtime_error("cannot write the games to " + name_ + ": " + std::strerror(errno)); }
  std::string name_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
};

// --db: the PGN text goes through a pipe to the importer (import_pgn, as `pgmate import`
// does it), running on a thread of its own while the games are made.
class DatabaseSink : public GameSink {
 public:
  explicit DatabaseSink(const std::string& conninfo) : conninfo_(conninfo) {
    std::signal(SIGPIPE, SIG_IGN);  // a stopped importer makes write() fail, not the process die
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    write_fd_ = fds[1];
    read_fd_ = fds[0];
    importer_ = std::thread([this] {
      try {
        status_ = import_pgn(conninfo_, "/dev/fd/" + std::to_string(read_fd_));
      } catch (const std::exception& e) {
        error_ = e.what();
        status_ = 1;
      }
      close(read_fd_);  // a writer still writing gets EPIPE, not a hang
    });
  }
  ~DatabaseSink() override {
    close_writer();
    if (importer_.joinable()) importer_.join();
  }
  void write(std::string_view pgn) override {
    while (!pgn.empty()) {
      const ssize_t n = ::write(write_fd_, pgn.data(), pgn.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        finish();  // the importer stopped: its message says why
        throw std::runtime_error("the import stopped before every game was made");
      }
      pgn.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void finish() override {
    close_writer();
    if (importer_.joinable()) importer_.join();
    if (!error_.empty()) throw std::runtime_error(error_);
    if (status_ != 0) throw std::runtime_error("the import of the generated games failed");
  }
  std::string name() const override { return "pgmate.games (--db " + conninfo_ + ")"; }

 private:
  void close_writer() {
    if (write_fd_ >= 0) close(write_fd_);
    write_fd_ = -1;
  }
  std::string conninfo_;
  int write_fd_ = -1, read_fd_ = -1;
  std::thread importer_;
  int status_ = 0;
  std::string error_;
};

std::unique_ptr<GameSink> open_sink(const Options& o) {
  if (o.to_db) return std::make_unique<DatabaseSink>(o.db);
  return std::make_unique<PgnFileSink>(o.out);
}

// A finished chunk: its games' PGN text and results.
struct Chunk {
  std::string text;
  Tally tally;
  bool ready = false;
};

Chunk make_chunk(const chess::PolyglotBook& book, std::uint64_t seed, std::int64_t first, std::int64_t end,
                 bool lichess) {
  Chunk c;
  for (std::int64_t i = first; i < end; ++i) {
    const chess::GeneratedGame g = chess::generate_game(book, seed, std::uint64_t(i));
    if (i > 0) c.text += '\n';  // the blank line before every game but the first
    c.text += lichess ? chess::lichess_pgn(g, seed, std::uint64_t(i)) : chess::to_pgn(g);
    c.tally.add(g);
  }
  return c;
}

// Makes the chunks on `threads` threads and writes them in order through `sink`. At most
// `window` chunks wait to be written, so memory stays bounded however large the corpus.
Tally generate_ordered(const Options& o, const chess::PolyglotBook& book, GameSink& sink, Progress& progress) {
  const std::int64_t chunks = (o.games + kChunkGames - 1) / kChunkGames;
  const std::int64_t window = std::int64_t(o.threads) * 4;
  std::vector<Chunk> ring(static_cast<std::size_t>(window));
  std::mutex mu;
  std::condition_variable cv;
  std::int64_t next = 0, written = 0;
  bool stop = false;
  std::exception_ptr error;

  auto worker = [&] {
    for (;;) {
      std::int64_t c;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next >= chunks || next < written + window; });
        if (stop || next >= chunks) return;
        c = next++;
      }
      try {
        Chunk done = make_chunk(book, o.seed, c * kChunkGames, std::min(o.games, (c + 1) * kChunkGames), o.lichess);
        done.ready = true;
        std::lock_guard lock(mu);
        ring[std::size_t(c % window)] = std::move(done);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        stop = true;
      }
      cv.notify_all();
    }
  };

  std::vector<std::thread> threads;
  Tally tally;
  std::uint64_t bytes = 0;
  try {
    for (int t = 0; t < o.threads; ++t) threads.emplace_back(worker);
    for (std::int64_t c = 0; c < chunks; ++c) {
      Chunk chunk;
      {
        std::unique_lock lock(mu);
        Chunk& slot = ring[std::size_t(c % window)];
        cv.wait(lock, [&] { return stop || slot.ready; });
        if (stop) break;
        chunk = std::move(slot);
        slot = Chunk();
        ++written;
      }
      cv.notify_all();
      sink.write(chunk.text);
      tally.add(chunk.tally);
      bytes += chunk.text.size();
      progress.update(bytes, std::uint64_t(tally.games));
    }
  } catch (...) {
    {
      std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
      stop = true;
    }
    cv.notify_all();
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  return tally;
}

}  // namespace

int generate_command(const std::vector<std::string>& args) {
  const Options o = parse_options(args);
  // The book first: a bad --book leaves an existing --out file alone.
  const chess::PolyglotBook book = chess::PolyglotBook::load(o.book);
  const std::unique_ptr<GameSink> sink = open_sink(o);

  const auto t0 = Clock::now();
  Progress progress(0, "games");
  const Tally tally = generate_ordered(o, book, *sink, progress);
  sink->finish();
  progress.finish();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();

  // The summary goes to standard output, or to standard error when the games do.
  std::ostream& out = o.out == "-" && !o.to_db ? std::cerr : std::cout;
  out << "generated " << tally.games << " games (W/D/L " << tally.white << "/" << tally.draws << "/" << tally.black
      << ", " << tally.plies << " plies, mean " << fixed(tally.games ? double(tally.plies) / double(tally.games) : 0, 1)
      << ") in " << fixed(secs, 1) << " s: " << std::int64_t(secs > 0 ? double(tally.games) / secs : 0)
      << " games/s on " << o.threads << " thread" << (o.threads == 1 ? "" : "s") << "; games in " << sink->name()
      << "\n";
  return 0;
}

}  // namespace pgmate::cli
