// pgmate import: PGN games into pgmate.games, ECO lines into pgmate.openings.
//
// The PGN is parsed here, on the client, with core/ (every move checked), streamed in
// 1 MiB chunks so memory stays bounded whatever the file size, and written with COPY
// (pqxx::stream_to). Games are committed in batches: a failure loses at most the batch in
// progress.
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "args.h"
#include "chess/fen.h"
#include "chess/notation.h"
#include "chess/pgn.h"
#include "commands.h"
#include "common/encoding.h"
#include "db.h"
#include "progress.h"

namespace pgmate::cli {

namespace {

// A COPY field: text, or NULL.
struct CopyField {
  std::string text;
  bool null = false;
};

}  // namespace
}  // namespace pgmate::cli

namespace pqxx {
template <>
struct string_traits<pgmate::cli::CopyField> {
  using T = pgmate::cli::CopyField;
  static constexpr const char* name() noexcept { return "pgmate::cli::CopyField"; }
  static constexpr bool has_null() noexcept { return true; }
  static bool is_null(const T& f) { return f.null; }
  static T null() { return T{{}, true}; }
  static void from_string(const char s[], T& f) { f = T{s ? s : "", s == nullptr}; }
  static std::string to_string(const T& f) { return f.text; }
};
}  // namespace pqxx

namespace pgmate::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunk = 1 << 20;
constexpr const char* kDefaultEcoFile = "/usr/share/pgn-extract/eco.pgn";
constexpr int kMaxShownErrors = 20;  // skip mode: bad games reported one by one up to this many

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

// ------------------------------------------------------------------------- text

// Text as PostgreSQL will take it: valid UTF-8 without NUL bytes. The reader already
// gives tag values in UTF-8 (what is not UTF-8 is read as Windows-1252: to_utf8); the same
// conversion applies here to anything else, and NUL becomes a space.
std::string clean_text(std::string_view s) {
  std::string out = to_utf8(s);
  for (char& c : out)
    if (c == '\0') c = ' ';
  return out;
}

CopyField text_field(const std::string* s) { return s ? CopyField{clean_text(*s)} : CopyField{{}, true}; }

// ------------------------------------------------------------------------- input

// A PGN file (or stdin for "-") read in chunks.
class PgnSource {
 public:
  explicit PgnSource(const std::string& path) : name_(path == "-" ? "standard input" : "\"" + path + "\"") {
    if (path == "-") {
      file_ = stdin;
    } else {
      file_ = std::fopen(path.c_str(), "rb");
      if (!file_) throw UsageError("cannot open PGN file " + name_ + ": " + std::strerror(errno));
      owned_ = true;
    }
    struct stat st {};
    if (fstat(fileno(file_), &st) == 0) {
      if (S_ISDIR(st.st_mode)) throw UsageError("cannot read PGN file " + name_ + ": it is a directory");
      if (S_ISREG(st.st_mode)) size_ = static_cast<std::uint64_t>(st.st_size);
    }
  }
  ~PgnSource() {
    if (owned_) std::fclose(file_);
  }
  PgnSource(const PgnSource&) = delete;
  PgnSource& operator=(const PgnSource&) = delete;

  std::uint64_t size() const { return size_; }  // 0 when unknown (a pipe)
  std::uint64_t bytes_read() const { return read_; }

  // The next chunk; empty at the end of the input.
  std::string_view read() {
    buffer_.resize(kChunk);
    const size_t n = std::fread(buffer_.data(), 1, buffer_.size(), file_);
    if (n == 0 && std::ferror(file_))
      throw std::runtime_error("error reading PGN file " + name_ + ": " + std::strerror(errno));
    read_ += n;
    return {buffer_.data(), n};
  }

 private:
  std::string name_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::uint64_t size_ = 0, read_ = 0;
  std::vector<char> buffer_;
};

// Feeds the whole source through a reader in kFail mode. on_game is called for every good
// game; on_error for every bad one (the reader then resynchronises and goes on).
// Either returns false to stop.
void read_games(PgnSource& source, const std::function<bool(chess::PgnGame&)>& on_game,
                const std::function<bool(const chess::PgnError&)>& on_error) {
  chess::PgnReader reader(chess::PgnErrorMode::kFail);
  chess::PgnGame game;
  auto drain = [&]() {
    for (;;) {
      try {
        if (!reader.next(game)) return true;
      } catch (const chess::PgnError& e) {
        if (!on_error(e)) return false;
        continue;
      }
      if (!on_game(game)) return false;
    }
  };
  for (;;) {
    const std::string_view chunk = source.read();
    if (chunk.empty()) break;
    reader.feed(chunk);
    if (!drain()) return;
  }
  reader.finish();
  drain();
}

// ------------------------------------------------------------------------- games

const std::vector<std::string> kGameColumns = {"source", "event", "site",        "date",  "round", "white",
                                               "black",  "result", "termination", "start", "moves", "tags"};
using GameRow = std::array<CopyField, 12>;

GameRow game_row(const chess::PgnGame& g) {
  chess::PgnTags clean_tags;
  for (const auto& [name, value] : g.tags) clean_tags.emplace_back(clean_text(name), clean_text(value));
  const std::string tags = chess::tags_json(clean_tags);
  return GameRow{CopyField{"import"},
                 text_field(g.tag("Event")),
                 text_field(g.tag("Site")),
                 text_field(g.tag("Date")),
                 text_field(g.tag("Round")),
                 text_field(g.tag("White")),
                 text_field(g.tag("Black")),
                 CopyField{g.result},
                 text_field(g.tag("Termination")),
                 CopyField{chess::to_fen(g.start)},
                 CopyField{uci_array(g.moves)},
                 CopyField{std::move(tags)}};
}

std::string games_word(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " game" : " games"); }

// What a stopped import kept: "1200 games committed (in 2 batches of up to 1000); the 200
// games of the unfinished batch were rolled back".
std::string committed_note(std::uint64_t committed, int batches, int batch_size, std::uint64_t lost) {
  std::string s = games_word(committed) + " committed";
  if (batches > 0)
    s += " (in " + std::to_string(batches) + (batches == 1 ? " batch" : " batches") + " of up to " +
         std::to_string(batch_size) + ")";
  if (lost > 0)
    s += "; the " + games_word(lost) + " of the unfinished batch " + (lost == 1 ? "was" : "were") + " rolled back";
  return s;
}

int import_games(const std::string& conninfo, const std::string& path, bool skip_errors, int batch_size) {
  PgnSource source(path);
  auto conn = connect_db(conninfo);
  require_table(*conn, "pgmate.games");

  // One transaction per batch, with a COPY open in it while games come in.
  std::unique_ptr<pqxx::work> tx;
  std::unique_ptr<pqxx::stream_to> copy;
  std::uint64_t committed = 0, in_batch = 0, skipped = 0;
  std::vector<int> batch_games;  // PGN game numbers of the rows of the open batch
  int batches = 0;
  const auto commit = [&]() {
    if (!tx) return;
    copy->complete();
    copy.reset();
    tx->commit();
    tx.reset();
    committed += in_batch;
    in_batch = 0;
    batch_games.clear();
    ++batches;
  };
  // Ends the open batch without keeping it (also after a failed COPY or commit).
  const auto rollback = [&]() noexcept {
    try {
      if (copy) copy->complete();
    } catch (const std::exception&) {
    }
    copy.reset();
    try {
      if (tx) tx->abort();
    } catch (const std::exception&) {
    }
    tx.reset();
  };

  Progress progress(source.size(), "games");
  const auto t0 = Clock::now();
  std::string failure;  // set when the import stops at a bad game
  int failed_game = 0;

  try {
    read_games(
        source,
        [&](chess::PgnGame& g) {
          if (!tx) {
            tx = std::make_unique<pqxx::work>(*conn, "pgmate_import");
            copy = std::make_unique<pqxx::stream_to>(*tx, "pgmate.games", kGameColumns);
          }
          *copy << game_row(g);
          batch_games.push_back(g.number);
          if (++in_batch >= static_cast<std::uint64_t>(batch_size)) commit();
          progress.update(source.bytes_read(), committed + in_batch);
          return true;
        },
        [&](const chess::PgnError& e) {
          if (!skip_errors) {
            failure = e.what();
            failed_game = e.game();
            return false;
          }
          if (++skipped <= kMaxShownErrors) {
            progress.clear();
            std::cerr << "pgmate import: skipped " << e.what() << '\n';
            if (skipped == kMaxShownErrors) std::cerr << "pgmate import: (further bad games are counted, not shown)\n";
          }
          return true;
        });
    if (failure.empty()) commit();
  } catch (const std::exception& e) {
    progress.finish();
    const std::uint64_t lost = in_batch;
    rollback();
    std::cerr << "pgmate import: " << db_message(e) << '\n';
    // A row the server rejected: "CONTEXT:  COPY games, line N: ..." counts the batch's rows.
    const std::string what = e.what(), context = "COPY games, line ";
    if (const size_t at = what.find(context); at != std::string::npos) {
      const size_t row = std::strtoul(what.c_str() + at + context.size(), nullptr, 10);
      if (row >= 1 && row <= batch_games.size())
        std::cerr << "pgmate import: the rejected row is PGN game " << batch_games[row - 1] << '\n';
    }
    std::cerr << "pgmate import: stopped: " << committed_note(committed, batches, batch_size, lost) << '\n';
    return 1;
  }
  progress.update(source.bytes_read(), committed + in_batch, true);
  progress.finish();

  if (!failure.empty()) {
    const std::uint64_t lost = in_batch;
    rollback();
    std::cerr << "pgmate import: " << failure << '\n'
              << "pgmate import: stopped at game " << failed_game << ": "
              << committed_note(committed, batches, batch_size, lost)
              << "; --on-error skip would import the good games\n";
    return 2;
  }
  std::cout << "imported " << committed << " games (" << skipped << " skipped) in "
            << format_seconds(seconds_since(t0)) << " s\n";
  return 0;
}

// ------------------------------------------------------------------------- openings

int import_openings(const std::string& conninfo, const std::string& path) {
  PgnSource source(path);
  using OpeningRow = std::array<CopyField, 6>;  // eco, name, variation, moves, ply, key
  std::vector<OpeningRow> rows;
  std::string error;
  read_games(
      source,
      [&](chess::PgnGame& g) {
        const std::string* eco = g.tag("ECO");
        const std::string* name = g.tag("Opening");
        if (!eco || !name) {
          error = "PGN game " + std::to_string(g.number) + ": no " + (eco ? "Opening" : "ECO") + " tag";
          return false;
        }
        chess::Board b = g.start;
        for (const chess::Move m : g.moves) b.play(m);
        rows.push_back(OpeningRow{text_field(eco), text_field(name), text_field(g.tag("Variation")),
                                  CopyField{uci_array(g.moves)}, CopyField{std::to_string(g.moves.size())},
                                  CopyField{std::to_string(static_cast<std::int64_t>(b.key))}});
        return true;
      },
      [&](const chess::PgnError& e) {
        error = e.what();
        return false;
      });
  if (!error.empty()) {
    std::cerr << "pgmate import: " << error << "\npgmate import: no openings loaded\n";
    return 2;
  }

  auto conn = connect_db(conninfo);
  require_table(*conn, "pgmate.openings");
  pqxx::work tx(*conn, "pgmate_import_openings");
  tx.exec0("DELETE FROM pgmate.openings");
  {
    pqxx::stream_to copy(tx, "pgmate.openings",
                         std::vector<std::string>{"eco", "name", "variation", "moves", "ply", "key"});
    for (const OpeningRow& r : rows) copy << r;
    copy.complete();
  }
  tx.commit();
  std::cout << "loaded " << rows.size() << " openings\n";
  return 0;
}

}  // namespace

int import_command(const std::vector<std::string>& args) {
  std::string conninfo, on_error = "fail";
  bool openings = false, batch_given = false, on_error_given = false;
  int batch = 10000;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") conninfo = value();
    else if (a == "--openings") openings = true;
    else if (a == "--on-error") on_error = value(), on_error_given = true;
    else if (a == "--batch") batch = parse_count(value(), "--batch", 1, 100000000), batch_given = true;
    else if (a.size() > 1 && a[0] == '-' && a[1] == '-') throw UsageError("unknown option " + a);
    else positional.push_back(a);
  }
  if (on_error != "fail" && on_error != "skip")
    throw UsageError("--on-error must be \"fail\" or \"skip\", not \"" + on_error + "\"");
  if (positional.size() > 1) throw UsageError("one input file only");

  try {
    if (openings) {
      if (batch_given || on_error_given) throw UsageError("--batch and --on-error are for games, not --openings");
      return import_openings(conninfo, positional.empty() ? kDefaultEcoFile : positional[0]);
    }
    if (positional.empty()) throw UsageError("a PGN file (or - for standard input) is required");
    return import_games(conninfo, positional[0], on_error == "skip", batch);
  } catch (const pqxx::sql_error& e) {
    throw std::runtime_error(db_message(e));
  } catch (const pqxx::broken_connection& e) {
    throw std::runtime_error("lost the database connection: " + db_message(e));
  }
}

}  // namespace pgmate::cli
