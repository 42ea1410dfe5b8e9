// pgmate import: PGN games into pgmate.games, ECO lines into pgmate.openings.
//
// The PGN is parsed here, on the client, with core/ (every move checked), streamed in
// 1 MiB chunks so memory stays bounded whatever the file size, and written with binary
// COPY over --jobs connections at once. Games are committed in batches: a
// failure loses at most the batches in progress. The position index runs the batches add
// are merged once at the end.
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <libpq-fe.h>
#include <pqxx/largeobject>
#include <pqxx/pqxx>

#include "analysis/evaluation.h"
#include "args.h"
#include "compressed_input.h"
#include "import.h"
#include "chess/fen.h"
#include "chess/notation.h"
#include "chess/packed.h"
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

// Whether clean_text would leave `s` as it is (the reader's tags nearly always are).
bool is_clean_text(std::string_view s) { return is_valid_utf8(s) && s.find('\0') == std::string_view::npos; }

// `s` itself when it is clean already, else its cleaned copy in `scratch`.
std::string_view cleaned(std::string_view s, std::string& scratch) {
  if (is_clean_text(s)) return s;
  scratch = clean_text(s);
  return scratch;
}

CopyField text_field(const std::string* s) { return s ? CopyField{clean_text(*s)} : CopyField{{}, true}; }

// ------------------------------------------------------------------------- input

// A PGN file (or stdin for "-") read in chunks, decompressed when it is zstd, gzip or bzip2
// (compressed_input.h). Compressed input is read and decompressed on a thread of its own, a
// few chunks ahead of the parser, so that the two share the work as two cores can.
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
      if (S_ISDIR(st.st_mode)) {
        if (owned_) std::fclose(file_);
        throw UsageError("cannot read PGN file " + name_ + ": it is a directory");
      }
      if (S_ISREG(st.st_mode)) size_ = static_cast<std::uint64_t>(st.st_size);
    }
    try {
      input_ = std::make_unique<CompressedInput>(file_, "PGN file " + name_);
    } catch (...) {
      if (owned_) std::fclose(file_);
      throw;
    }
    if (std::string_view(input_->format()) != "plain") reader_ = std::thread([this] { read_ahead(); });
  }
  ~PgnSource() {
    if (reader_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        stop_ = true;
      }
      changed_.notify_all();
      reader_.join();
    }
    input_.reset();
    if (owned_) std::fclose(file_);
  }
  PgnSource(const PgnSource&) = delete;
  PgnSource& operator=(const PgnSource&) = delete;

  std::uint64_t size() const { return size_; }  // of the file, 0 when unknown (a pipe)
  std::uint64_t bytes_read() const { return file_read_.load(); }  // of the file, as size()
  const char* format() const { return input_->format(); }

  // The next chunk of PGN text; empty at the end of the input. A read or decompression
  // error comes after the chunks read before it.
  std::string_view read() {
    if (!reader_.joinable()) {
      current_.resize(kChunk);
      const size_t n = input_->read(current_.data(), current_.size());
      file_read_.store(input_->file_bytes_read());
      return {current_.data(), n};
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || ended_; });
    if (!ready_.empty()) {
      current_ = std::move(ready_.front());
      ready_.pop_front();
      changed_.notify_all();
      return {current_.data(), current_.size()};
    }
    if (error_) std::rethrow_exception(error_);
    return {};
  }

 private:
  static constexpr std::size_t kChunksAhead = 4;

  void read_ahead() {
    try {
      for (;;) {
        std::vector<char> chunk(kChunk);
        chunk.resize(input_->read(chunk.data(), chunk.size()));
        file_read_.store(input_->file_bytes_read());
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || ready_.size() < kChunksAhead; });
        if (stop_) return;
        if (chunk.empty()) break;
        ready_.push_back(std::move(chunk));
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    ended_ = true;
    changed_.notify_all();
  }

  std::string name_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::uint64_t size_ = 0;
  std::unique_ptr<CompressedInput> input_;
  std::vector<char> current_;
  std::atomic<std::uint64_t> file_read_{0};
  // the read-ahead thread's chunks, in order, and how it ended
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<char>> ready_;
  bool stop_ = false, ended_ = false;
  std::exception_ptr error_;
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
                                               "black",  "result", "termination", "start", "moves", "tags",
                                               "movetext_result", "clocks"};
// The columns a server of pgmate before 0.11.0 has: all but movetext_result and clocks.
constexpr std::size_t kColumnsBefore011 = 12;
// A game as one tuple of COPY's binary format (kGameColumns: a field count, then each
// field's length and bytes), written straight into one string. Binary spares the server
// the parsing of every move's text and of every field's escapes: the move arrays' text
// input alone was about a tenth of the server's time in an import.
using GameRow = std::string;

void append_int16(std::string& out, std::int16_t v) {
  const auto u = static_cast<std::uint16_t>(v);
  const char bytes[2] = {char(u >> 8), char(u & 0xFF)};
  out.append(bytes, 2);
}

void append_int32(std::string& out, std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  const char bytes[4] = {char(u >> 24), char((u >> 16) & 0xFF), char((u >> 8) & 0xFF), char(u & 0xFF)};
  out.append(bytes, 4);
}

void append_field(std::string& out, std::string_view bytes) {
  append_int32(out, static_cast<std::int32_t>(bytes.size()));
  out.append(bytes);
}

// A text field in the form the server takes (valid UTF-8, no NUL), or NULL.
void append_tag_field(std::string& out, const std::string* value) {
  if (!value) return append_int32(out, -1);
  std::string scratch;
  append_field(out, cleaned(*value, scratch));
}

// The types of pgmate.games.moves' elements and of its start: a binary array names its
// elements' type, and the server checks.
std::uint32_t move_type_oid(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  return tx.exec1("SELECT t.typelem FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                  "WHERE a.attrelid = 'pgmate.games'::regclass AND a.attname = 'moves'")[0]
      .as<std::uint32_t>();
}
std::uint32_t board_type_oid(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  return tx.exec1("SELECT atttypid FROM pg_attribute WHERE attrelid = 'pgmate.games'::regclass AND attname = 'start'")[0]
      .as<std::uint32_t>();
}

// libpqxx 6 writes COPY only as text lines, and keeps its connection to its large-object
// class: the binary COPY goes through libpq on the transaction's own connection.
struct RawConnection : pqxx::largeobject {
  static PGconn* of(const pqxx::dbtransaction& tx) { return raw_connection(tx); }
};

// Reads the results a statement left; throws the first error as pqxx would. `first`: a
// result already taken that was not what the caller wanted (it is cleared here).
void finish_statement(PGconn* conn, const std::string& statement, PGresult* first = nullptr) {
  std::string error, sqlstate;
  const auto take = [&](PGresult* r) {
    const ExecStatusType status = PQresultStatus(r);
    if (error.empty() && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      error = PQresultErrorMessage(r);
      if (const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE)) sqlstate = state;
    }
    PQclear(r);
  };
  if (first) take(first);
  while (PGresult* r = PQgetResult(conn)) take(r);
  if (error.empty() && PQstatus(conn) != CONNECTION_OK) error = PQerrorMessage(conn);
  if (error.empty() && first) error = "unexpected result of " + statement;
  if (!error.empty()) throw pqxx::sql_error(error, statement, sqlstate.empty() ? nullptr : sqlstate.c_str());
}

// COPY of tuples already in COPY's binary format, inside the transaction.
void copy_rows(pqxx::dbtransaction& tx, const std::string& table, const std::vector<GameRow>& rows, std::size_t columns) {
  PGconn* conn = RawConnection::of(tx);
  std::string statement = "COPY " + table + " (";
  for (std::size_t i = 0; i < columns; ++i) statement += (i ? ", " : "") + kGameColumns[i];
  statement += ") FROM STDIN (FORMAT binary)";
  if (!PQsendQuery(conn, statement.c_str())) throw pqxx::broken_connection(PQerrorMessage(conn));
  PGresult* started = PQgetResult(conn);
  if (!started || PQresultStatus(started) != PGRES_COPY_IN) {
    finish_statement(conn, statement, started);  // throws the server's error
    throw pqxx::sql_error("no COPY started by " + statement, statement);
  }
  PQclear(started);
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
  std::string buffer(kSignature, sizeof kSignature);
  append_int32(buffer, 0);  // flags
  append_int32(buffer, 0);  // header extension length
  bool sent = true;
  auto flush = [&] {
    if (sent && PQputCopyData(conn, buffer.data(), static_cast<int>(buffer.size())) != 1) sent = false;
    buffer.clear();
  };
  for (const GameRow& row : rows) {
    buffer += row;
    if (buffer.size() >= (std::size_t{1} << 18)) flush();
  }
  append_int16(buffer, -1);  // the trailer
  flush();
  // A failed send ends the COPY with an error of its own, so that the connection leaves
  // COPY state either way; the server's message is what is thrown.
  PQputCopyEnd(conn, sent ? nullptr : "pgmate import: sending the rows failed");
  finish_statement(conn, statement);
}

// The scores of a batch's [%eval] comments, column by column, as the elements of binary
// arrays (each element its length, then its bytes; -1 for NULL): sent as the parameters of
// pgmate.save_position_scores, they spare the server the JSON and FEN of
// pgmate.save_position_evals: their parsing was about a tenth of an import of lichess's
// games, whose evaluations' rows were a quarter of it in all.
struct EvalColumns {
  std::int32_t count = 0;
  std::string positions, score_cp, mate, win, draw, loss;

  void add(const analysis::PgnEval& e) {
    const chess::PackedBoard packed = chess::pack(e.position);
    append_field(positions, std::string_view(reinterpret_cast<const char*>(packed.data()), packed.size()));
    const analysis::Score& score = e.eval.score();
    append_int4(score.mate ? nullptr : &score.value, score_cp);
    append_int4(score.mate ? &score.value : nullptr, mate);
    append_int2(e.eval.wdl.win, win);
    append_int2(e.eval.wdl.draw, draw);
    append_int2(e.eval.wdl.loss, loss);
    ++count;
  }
  // One column as a whole one-dimensional array of `element_oid`.
  std::string array(const std::string& elements, std::uint32_t element_oid) const {
    std::string out;
    out.reserve(20 + elements.size());
    append_int32(out, 1);  // dimensions
    append_int32(out, 1);  // may hold NULLs
    append_int32(out, static_cast<std::int32_t>(element_oid));
    append_int32(out, count);
    append_int32(out, 1);  // lower bound
    out += elements;
    return out;
  }

 private:
  static void append_int4(const int* v, std::string& out) {
    if (!v) return append_int32(out, -1);
    append_int32(out, 4);
    append_int32(out, *v);
  }
  static void append_int2(int v, std::string& out) {
    append_int32(out, 2);
    append_int16(out, static_cast<std::int16_t>(v));
  }
};

// pgmate.save_position_scores('pgn', '', ...) of a batch's evaluations, inside the
// transaction: the evaluations that were new.
std::uint64_t save_scores(pqxx::dbtransaction& tx, const EvalColumns& evals, std::uint32_t board_oid) {
  constexpr std::uint32_t kInt4Oid = 23, kInt2Oid = 21;
  const std::string arrays[6] = {evals.array(evals.positions, board_oid), evals.array(evals.score_cp, kInt4Oid),
                                 evals.array(evals.mate, kInt4Oid),       evals.array(evals.win, kInt2Oid),
                                 evals.array(evals.draw, kInt2Oid),       evals.array(evals.loss, kInt2Oid)};
  const char* values[6];
  int lengths[6], formats[6];
  for (int i = 0; i < 6; ++i) {
    values[i] = arrays[i].data();
    lengths[i] = static_cast<int>(arrays[i].size());
    formats[i] = 1;  // binary
  }
  static const std::string statement = "SELECT pgmate.save_position_scores('pgn', '', $1, $2, $3, $4, $5, $6)";
  PGconn* conn = RawConnection::of(tx);
  PGresult* r = PQexecParams(conn, statement.c_str(), 6, nullptr, values, lengths, formats, 0);
  if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
    const std::uint64_t saved = std::strtoull(PQgetvalue(r, 0, 0), nullptr, 10);
    PQclear(r);
    return saved;
  }
  finish_statement(conn, statement, r);  // throws the server's error
  throw pqxx::sql_error("no result of " + statement, statement);
}

// interval[] in COPY's binary format: seconds left after each move, NULL where none.
void append_clocks(std::string& out, const std::vector<double>& seconds) {
  constexpr std::int32_t kIntervalOid = 1186;
  std::string array;
  append_int32(array, 1);  // dimensions
  append_int32(array, std::any_of(seconds.begin(), seconds.end(), [](double s) { return s < 0; }) ? 1 : 0);
  append_int32(array, kIntervalOid);
  append_int32(array, static_cast<std::int32_t>(seconds.size()));
  append_int32(array, 1);  // lower bound
  for (const double s : seconds) {
    if (s < 0) {
      append_int32(array, -1);
      continue;
    }
    append_int32(array, 16);  // microseconds (int64), days, months
    const auto micros = static_cast<std::uint64_t>(std::llround(s * 1e6));
    append_int32(array, static_cast<std::int32_t>(micros >> 32));
    append_int32(array, static_cast<std::int32_t>(micros & 0xFFFFFFFFu));
    append_int32(array, 0);
    append_int32(array, 0);
  }
  append_field(out, array);
}

GameRow game_row(const chess::PgnGame& g, std::uint32_t move_oid, std::size_t columns) {
  GameRow row;
  row.reserve(720 + 6 * g.moves.size());
  append_int16(row, static_cast<std::int16_t>(columns));
  append_field(row, "import");
  for (const char* tag : {"Event", "Site", "Date", "Round", "White", "Black"}) append_tag_field(row, g.tag(tag));
  append_field(row, g.result);
  append_tag_field(row, g.tag("Termination"));
  const chess::PackedBoard start = chess::pack(g.start);
  append_field(row, std::string_view(reinterpret_cast<const char*>(start.data()), start.size()));
  // The moves as a one-dimensional move[] of their 16 bits each, as move_recv reads them
  // (without the kinds a board is needed to know: chess::board_free).
  const auto n = static_cast<std::int32_t>(g.moves.size());
  append_int32(row, n == 0 ? 12 : 20 + 6 * n);
  append_int32(row, n == 0 ? 0 : 1);  // dimensions
  append_int32(row, 0);               // no NULLs
  append_int32(row, static_cast<std::int32_t>(move_oid));
  if (n > 0) {
    append_int32(row, n);
    append_int32(row, 1);  // lower bound
    // Each element: its length (2), then its bits; written in place, six bytes a move.
    std::size_t at = row.size();
    row.resize(at + 6 * g.moves.size());
    for (const chess::Move m : g.moves) {
      const std::uint16_t bits = chess::board_free(m).bits();
      const unsigned char element[6] = {0, 0, 0, 2, static_cast<unsigned char>(bits >> 8), static_cast<unsigned char>(bits & 0xFF)};
      std::memcpy(row.data() + at, element, 6);
      at += 6;
    }
  }
  // The tags as jsonb: version 1, then the JSON text, built in memory kept by the thread;
  // the reader's tags are nearly always clean already, and are then used as they are.
  thread_local std::string json;
  json.assign(1, '\x01');
  const bool clean = std::all_of(g.tags.begin(), g.tags.end(), [](const auto& tag) {
    return is_clean_text(tag.first) && is_clean_text(tag.second);
  });
  if (clean) {
    chess::append_tags_json_in_jsonb_order(json, g.tags);
  } else {
    chess::PgnTags clean_tags;
    for (const auto& [name, value] : g.tags) clean_tags.emplace_back(clean_text(name), clean_text(value));
    chess::append_tags_json_in_jsonb_order(json, clean_tags);
  }
  append_field(row, json);
  if (columns > kColumnsBefore011) {
    if (g.movetext_result.empty()) append_int32(row, -1);
    else append_field(row, g.movetext_result);
    if (g.clocks.empty()) append_int32(row, -1);
    else append_clocks(row, g.clocks);
  }
  return row;
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

// A batch of rows for one COPY and one transaction, with the PGN game number of each row.
struct Batch {
  std::vector<GameRow> rows;
  std::vector<int> games;
  EvalColumns scores;  // the evaluations of [%eval] comments
  std::string evals;   // the same as eval_json elements, comma-separated, for a pgmate before 0.17.0
};

// Batches go to `jobs` connections, each sending one at a time in its own transaction, so
// the server checks moves and builds position index runs on as many backends at once;
// the PGN is read and parsed here, on one thread, at well over 100,000 games/s. A full
// batch is handed over only when a connection is free: memory stays at a few batches.
class BatchSenders {
 public:
  // skip_duplicates: games already stored (or earlier in the same batch) are left out.
  BatchSenders(const std::string& conninfo, int jobs, bool skip_duplicates) : skip_duplicates_(skip_duplicates) {
    for (int i = 0; i < jobs; ++i) {
      conns_.push_back(connect_db(conninfo));
      if (i == 0) {
        require_table(*conns_[0], "pgmate.games");
        move_oid_ = move_type_oid(*conns_[0]);
        board_oid_ = board_type_oid(*conns_[0]);
        pqxx::nontransaction tx(*conns_[0]);
        saves_scores_ = tx.exec1("SELECT to_regproc('pgmate.save_position_scores') IS NOT NULL")[0].as<bool>();
        columns_ = tx.exec1("SELECT count(*) FROM pg_attribute WHERE attrelid = 'pgmate.games'::regclass "
                            "AND attname = 'clocks' AND NOT attisdropped")[0].as<int>() ? kGameColumns.size()
                                                                                        : kColumnsBefore011;
      }
      // Inserts leave their position index runs unmerged; finish() merges once. A server
      // without the setting (an older pgmate) merges as it goes.
      try {
        pqxx::nontransaction(*conns_.back()).exec("SET pgmate.position_index_deferred_merges = on");
      } catch (const pqxx::sql_error&) {
      }
      // The index trigger reads a batch's new rows from a transition table, which spills to
      // a temporary file beyond work_mem (4 MB by default; a batch of 10,000 games is about
      // 8 MB): written and read back once per batch for nothing.
      pqxx::nontransaction(*conns_.back()).exec("SET work_mem = '64MB'");
    }
    for (int i = 0; i < jobs; ++i) threads_.emplace_back([this, i] { run(*conns_[i]); });
  }
  ~BatchSenders() { stop(); }
  BatchSenders(const BatchSenders&) = delete;
  BatchSenders& operator=(const BatchSenders&) = delete;

  // Queues a batch, waiting while every connection is busy; false once one has failed.
  bool send(Batch batch) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() || !failure_.empty(); });
    if (!failure_.empty()) return false;
    in_flight_ += batch.rows.size();
    queue_.push_back(std::move(batch));
    changed_.notify_all();
    return true;
  }

  // Waits until every queued batch is committed or a connection failed.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    for (const Batch& b : queue_) lost_ += b.rows.size(), in_flight_ -= b.rows.size();  // left after a failure
    queue_.clear();
  }

  // Merges the runs the import left, as inserts would have: level 0's runs on every
  // connection at once (each its share of the keys, published together), then whatever
  // that fills in turn, on the first connection.
  void merge_position_index() {
    std::vector<std::int64_t> runs;
    {
      pqxx::work tx(*conns_[0], "pgmate_import_merge");
      const pqxx::row can = tx.exec1(
          "SELECT to_regprocedure('pgmate.position_index_merge(boolean)') IS NOT NULL, "
          "to_regprocedure('pgmate.position_index_merge_part(bigint[], int, int)') IS NOT NULL");
      if (!can[0].as<bool>()) return;  // an older pgmate: its inserts merged as they went
      if (can[1].as<bool>())
        for (const auto& r : tx.exec("SELECT id FROM pgmate.position_runs WHERE level = 0 ORDER BY id"))
          runs.push_back(r[0].as<std::int64_t>());
      tx.commit();
    }
    // At most three parts: they land on level 1 together, and four there would be merged.
    const int parts = static_cast<int>(std::min<std::size_t>(conns_.size(), 3));
    if (parts > 1 && runs.size() >= 4) merge_in_parts(runs, parts);
    pqxx::work tx(*conns_[0], "pgmate_import_merge");
    tx.exec("SELECT pgmate.position_index_merge(false)");
    tx.commit();
  }

  // Counts again the positions the explorer keeps counts of (the import left them stale);
  // the positions counted, -1 for a pgmate without counts, -2 for a role that may not.
  std::int64_t refresh_counts() {
    pqxx::work tx(*conns_[0], "pgmate_import_counts");
    const pqxx::row can = tx.exec1(
        "SELECT p IS NOT NULL, p IS NOT NULL AND has_function_privilege(p, 'EXECUTE') "
        "FROM to_regprocedure('pgmate.position_counts_refresh(int)') p");
    if (!can[0].as<bool>()) return -1;
    if (!can[1].as<bool>()) return -2;
    const std::int64_t positions = tx.exec1("SELECT pgmate.position_counts_refresh()")[0].as<std::int64_t>();
    tx.commit();
    return positions;
  }

  std::uint32_t move_oid() const { return move_oid_; }  // for game_row
  std::size_t columns() const { return columns_; }      // of kGameColumns the server has
  // Whether the server stores evaluations (pgmate 0.11.0 on).
  bool keeps_evals() const { return columns_ > kColumnsBefore011; }
  // Whether it takes them as arrays (pgmate.save_position_scores, 0.17.0 on), not as JSON.
  bool saves_scores() const { return saves_scores_; }
  std::uint64_t evals_saved() const { return evals_saved_; }
  std::uint64_t committed() const { return committed_; }
  std::uint64_t duplicates() const { return duplicates_; }
  std::uint64_t in_flight() const { return in_flight_; }
  int batches() const { return batches_; }
  // The first failure ("" when none), the PGN game of the row the server rejected (0 when
  // not known) and the games of the batches rolled back with it.
  std::string failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
  }
  int rejected_game() const { return rejected_game_; }
  std::uint64_t lost() const { return lost_; }

 private:
  // The parallel merge; on any failure the runs stay as they were (the parts are dropped
  // by the next change to the index) and the sequential merge that follows does it all.
  void merge_in_parts(const std::vector<std::int64_t>& runs, int parts) {
    std::string run_array = "{";
    for (std::size_t i = 0; i < runs.size(); ++i) run_array += (i ? "," : "") + std::to_string(runs[i]);
    run_array += "}";
    std::vector<std::string> part_ids(static_cast<std::size_t>(parts));
    std::atomic<bool> failed{false};
    std::vector<std::thread> workers;
    for (int p = 0; p < parts; ++p)
      workers.emplace_back([&, p] {
        try {
          pqxx::work tx(*conns_[static_cast<std::size_t>(p)], "pgmate_import_merge_part");
          const pqxx::row r = tx.exec_params1("SELECT pgmate.position_index_merge_part($1::bigint[], $2, $3)", run_array,
                                              p, parts);
          if (!r[0].is_null()) part_ids[static_cast<std::size_t>(p)] = r[0].as<std::string>();
          tx.commit();
        } catch (const std::exception&) {
          failed = true;
        }
      });
    for (auto& w : workers) w.join();
    if (failed) return;
    std::string part_array = "{";
    for (const std::string& id : part_ids)
      if (!id.empty()) part_array += (part_array.size() > 1 ? "," : "") + id;
    part_array += "}";
    try {
      pqxx::work tx(*conns_[0], "pgmate_import_merge_publish");
      tx.exec_params("SELECT pgmate.position_index_merge_publish($1::bigint[], $2::bigint[], 1)", run_array, part_array);
      tx.commit();
    } catch (const pqxx::sql_error&) {
      return;
    }
    // The runs merged are removed on every connection at once (best effort: the next change
    // to the index removes what is left).
    workers.clear();
    for (int p = 0; p < parts; ++p)
      workers.emplace_back([&, p] {
        try {
          pqxx::work tx(*conns_[static_cast<std::size_t>(p)], "pgmate_import_clean");
          tx.exec_params("SELECT pgmate.position_index_clean($1, $2)", p, parts);
          tx.commit();
        } catch (const std::exception&) {
        }
      });
    for (auto& w : workers) w.join();
  }

  void run(pqxx::connection& conn) {
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || closing_ || !failure_.empty(); });
        if (!failure_.empty() || queue_.empty()) return;
        batch = std::move(queue_.front());
        queue_.pop_front();
        changed_.notify_all();
      }
      try {
        pqxx::work tx(conn, "pgmate_import");
        std::size_t duplicates = 0;
        if (!skip_duplicates_) {
          copy_rows(tx, "pgmate.games", batch.rows, columns_);
        } else {
          duplicates = batch.rows.size() - insert_new_games(tx, batch, columns_);
        }
        // The evaluations of the batch's comments, with its games.
        std::uint64_t evals = 0;
        if (batch.scores.count > 0) evals = save_scores(tx, batch.scores, board_oid_);
        if (!batch.evals.empty())
          evals = tx.exec_params1("SELECT pgmate.save_position_evals('pgn', '', $1::jsonb)", "[" + batch.evals + "]")[0]
                      .as<std::uint64_t>();
        tx.commit();
        evals_saved_ += evals;
        std::lock_guard lock(mutex_);
        committed_ += batch.rows.size() - duplicates;
        duplicates_ += duplicates;
        in_flight_ -= batch.rows.size();
        ++batches_;
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        if (failure_.empty()) {
          failure_ = db_message(e);
          // A row the server rejected: "CONTEXT:  COPY games, line N: ..." counts the batch's rows.
          const std::string what = e.what(), context = "COPY games, line ";
          if (const size_t at = what.find(context); at != std::string::npos) {
            const size_t row = std::strtoul(what.c_str() + at + context.size(), nullptr, 10);
            if (row >= 1 && row <= batch.games.size()) rejected_game_ = batch.games[row - 1];
          }
        }
        lost_ += batch.rows.size();
        in_flight_ -= batch.rows.size();
        changed_.notify_all();
        return;
      }
    }
  }

  // The batch goes to a temporary table first; only games with no copy stored, or earlier
  // in the batch, go on to pgmate.games. One connection at a time does this step (a
  // transaction lock), so that two batches in flight cannot both keep a copy. Returns the
  // games inserted.
  static std::size_t insert_new_games(pqxx::work& tx, const Batch& batch, std::size_t column_count) {
    std::string columns;
    for (std::size_t i = 0; i < column_count; ++i) columns += (i ? ", " : "") + kGameColumns[i];
    // Named by its columns: a server upgraded in this session's life gets a table of its own.
    const std::string temp = "pgmate_import_batch_" + std::to_string(column_count);
    tx.exec0("CREATE TEMP TABLE IF NOT EXISTS " + temp + " ON COMMIT DELETE ROWS AS SELECT " + columns +
             " FROM pgmate.games WITH NO DATA");
    {
      copy_rows(tx, temp, batch.rows, column_count);
    }
    tx.exec("SELECT pgmate.import_duplicates_lock()");
    const pqxx::result inserted = tx.exec0(
        "INSERT INTO pgmate.games (" + columns + ") SELECT " + columns + " FROM ("
        "  SELECT DISTINCT ON (h, start::text, moves::text) *"
        "  FROM (SELECT b.*, game_hash(b.start, b.moves) AS h, b.ctid AS position FROM " + temp + " b) b"
        "  WHERE NOT EXISTS (SELECT 1 FROM pgmate.games g"
        "                    WHERE g.game_hash = b.h AND g.start = b.start AND g.moves = b.moves)"
        "  ORDER BY h, start::text, moves::text, position) first_copies ORDER BY position");
    return static_cast<std::size_t>(inserted.affected_rows());
  }

  std::vector<std::unique_ptr<pqxx::connection>> conns_;
  std::uint32_t move_oid_ = 0, board_oid_ = 0;
  bool saves_scores_ = false;
  std::size_t columns_ = kColumnsBefore011;
  std::atomic<std::uint64_t> evals_saved_{0};
  std::vector<std::thread> threads_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;
  bool closing_ = false;
  std::string failure_;
  int rejected_game_ = 0;
  bool skip_duplicates_;
  std::atomic<std::uint64_t> committed_{0}, in_flight_{0}, lost_{0}, duplicates_{0};
  std::atomic<int> batches_{0};
};

int import_games(const std::string& conninfo, const std::string& path, bool skip_errors, int batch_size, int jobs,
                 bool skip_duplicates) {
  PgnSource source(path);
  Progress progress(source.size(), "games");
  const auto t0 = Clock::now();
  std::uint64_t skipped = 0, notes = 0, conflicts = 0;
  std::string failure;  // set when the import stops at a bad game
  int failed_game = 0;
  Batch batch;
  std::unique_ptr<BatchSenders> senders;

  // What a stopped import kept; the games of the batch being filled are never sent.
  auto stopped_note = [&] {
    return committed_note(senders->committed(), senders->batches(), batch_size, senders->lost() + batch.rows.size());
  };
  try {
    senders = std::make_unique<BatchSenders>(conninfo, jobs, skip_duplicates);
    read_games(
        source,
        [&](chess::PgnGame& g) {
          batch.rows.push_back(game_row(g, senders->move_oid(), senders->columns()));
          batch.games.push_back(g.number);
          if (!g.evals.empty() && senders->saves_scores()) {
            for (const analysis::PgnEval& e : analysis::pgn_evals(g.start, g.moves, g.evals)) batch.scores.add(e);
          } else if (!g.evals.empty() && senders->keeps_evals()) {
            int count = 0;
            const std::string json = analysis::pgn_evals_json(g.start, g.moves, g.evals, count);
            if (count) {
              if (!batch.evals.empty()) batch.evals += ',';
              batch.evals += json;
            }
          }
          // What the PGN said that was read past its letter: shown, as bad games are.
          const auto note = [&](const std::string& text) {
            if (++notes <= kMaxShownErrors) {
              progress.clear();
              std::cerr << "pgmate import: PGN game " << g.number << ": " << text << '\n';
              if (notes == kMaxShownErrors) std::cerr << "pgmate import: (further notes are counted, not shown)\n";
            }
          };
          if (!g.movetext_result.empty()) {
            ++conflicts;
            note("the Result tag's " + g.result + " is kept; the movetext ends with " + g.movetext_result);
          }
          for (const std::string& r : g.resolved) note(r);
          if (batch.rows.size() >= static_cast<std::size_t>(batch_size)) {
            if (!senders->send(std::move(batch))) return false;
            batch = Batch{};
          }
          progress.update(source.bytes_read(), senders->committed() + senders->in_flight() + batch.rows.size());
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
    if (failure.empty() && senders->failure().empty() && !batch.rows.empty()) {
      senders->send(std::move(batch));
      batch = Batch{};
    }
    senders->stop();
  } catch (const std::exception& e) {
    progress.finish();
    std::cerr << "pgmate import: " << db_message(e) << '\n';
    if (senders) {
      senders->stop();
      std::cerr << "pgmate import: stopped: " << stopped_note() << '\n';
    }
    return 1;
  }
  progress.update(source.bytes_read(), senders->committed(), true);
  progress.finish();

  // A stopped import still merges the runs of what it committed (best effort: the next
  // insert, or pgmate.position_index_merge(), merges them otherwise).
  const auto merge_what_was_kept = [&] {
    try {
      if (senders->committed() > 0) senders->merge_position_index();
    } catch (const std::exception&) {
    }
  };
  if (const std::string sent = senders->failure(); !sent.empty()) {
    merge_what_was_kept();
    std::cerr << "pgmate import: " << sent << '\n';
    if (senders->rejected_game() > 0)
      std::cerr << "pgmate import: the rejected row is PGN game " << senders->rejected_game() << '\n';
    std::cerr << "pgmate import: stopped: " << stopped_note() << '\n';
    return 1;
  }
  if (!failure.empty()) {
    merge_what_was_kept();
    std::cerr << "pgmate import: " << failure << '\n'
              << "pgmate import: stopped at game " << failed_game << ": " << stopped_note()
              << "; --on-error skip would import the good games\n";
    return 2;
  }
  double merge_seconds = 0, counts_seconds = 0;
  std::int64_t counted_positions = -1;
  if (senders->committed() > 0) {
    try {
      const auto merge_start = Clock::now();
      senders->merge_position_index();
      merge_seconds = seconds_since(merge_start);
    } catch (const std::exception& e) {
      std::cerr << "pgmate import: " << db_message(e) << "\npgmate import: " << games_word(senders->committed())
                << " committed, their position index runs not merged: SELECT pgmate.position_index_merge(false) merges them\n";
      return 1;
    }
    try {
      const auto counts_start = Clock::now();
      counted_positions = senders->refresh_counts();
      counts_seconds = seconds_since(counts_start);
    } catch (const std::exception& e) {
      std::cerr << "pgmate import: " << db_message(e) << "\npgmate import: " << games_word(senders->committed())
                << " committed and indexed; the explorer reads their games until SELECT "
                   "pgmate.position_counts_refresh() counts them\n";
      return 1;
    }
  }
  std::cout << "imported " << senders->committed() << " games (" << skipped << " skipped"
            << (skip_duplicates ? ", " + std::to_string(senders->duplicates()) + " duplicates" : std::string()) << ") in "
            << format_seconds(seconds_since(t0)) << " s\n";
  if (conflicts)
    std::cout << conflicts << " of them with a Result tag that contradicts the movetext (the tag's result kept; "
              << "the movetext's in pgmate.games.movetext_result)\n";
  if (senders->evals_saved())
    std::cout << senders->evals_saved() << " evaluations from [%eval] comments stored in pgmate.position_evals "
              << "(engine 'pgn')\n";
  if (merge_seconds >= 1) std::cout << "the position index was merged in " << format_seconds(merge_seconds) << " s of it\n";
  if (counted_positions == -2)
    std::cerr << "pgmate import: the explorer's counts were not refreshed (this role may not execute "
                 "pgmate.position_counts_refresh): the explorer reads the games where they are stale until it runs\n";
  if (counted_positions >= 0 && counts_seconds >= 1)
    std::cout << "the explorer's counts of " << counted_positions << " positions were refreshed in "
              << format_seconds(counts_seconds) << " s of it\n";
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

int import_pgn(const std::string& conninfo, const std::string& path) {
  return import_games(conninfo, path, false, 10000, static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u)),
                      false);
}

int import_command(const std::vector<std::string>& args) {
  std::string conninfo, on_error = "fail", duplicates = "keep";
  bool openings = false, batch_given = false, on_error_given = false, jobs_given = false, duplicates_given = false;
  int batch = 10000;
  int jobs = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
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
    else if (a == "--jobs") jobs = parse_count(value(), "--jobs", 1, 64), jobs_given = true;
    else if (a == "--duplicates") duplicates = value(), duplicates_given = true;
    else if (a.size() > 1 && a[0] == '-' && a[1] == '-') throw UsageError("unknown option " + a);
    else positional.push_back(a);
  }
  if (on_error != "fail" && on_error != "skip")
    throw UsageError("--on-error must be \"fail\" or \"skip\", not \"" + on_error + "\"");
  if (duplicates != "keep" && duplicates != "skip")
    throw UsageError("--duplicates must be \"keep\" or \"skip\", not \"" + duplicates + "\"");
  if (positional.size() > 1) throw UsageError("one input file only");

  try {
    if (openings) {
      if (batch_given || on_error_given || jobs_given || duplicates_given)
        throw UsageError("--batch, --jobs, --duplicates and --on-error are for games, not --openings");
      return import_openings(conninfo, positional.empty() ? kDefaultEcoFile : positional[0]);
    }
    if (positional.empty()) throw UsageError("a PGN file (or - for standard input) is required");
    return import_games(conninfo, positional[0], on_error == "skip", batch, jobs, duplicates == "skip");
  } catch (const pqxx::sql_error& e) {
    throw std::runtime_error(db_message(e));
  } catch (const pqxx::broken_connection& e) {
    throw std::runtime_error("lost the database connection: " + db_message(e));
  }
}

}  // namespace pgmate::cli
