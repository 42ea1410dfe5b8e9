// libFuzzer target: the PGN reader. The first byte picks a chunk size; the rest is PGN
// text. Read whole and fed in chunks, it must give the same games and the same errors (so
// the in-place fast paths and the byte-by-byte paths agree), and every game it gives must
// be sound: each move legal from its start, tag values valid UTF-8, one of the four results.
#include <string>
#include <vector>

#include "chess/pgn.h"
#include "common/encoding.h"
#include "fuzz_common.h"

using namespace pgmate::fuzz;

namespace {

// Games and error messages in input order, read in kFail mode (going on after each error).
std::vector<std::string> read_all(std::string_view text, std::size_t chunk) {
  std::vector<std::string> out;
  PgnReader reader(PgnErrorMode::kFail);
  PgnGame g;
  auto drain = [&] {
    for (;;) {
      try {
        if (!reader.next(g)) return;
      } catch (const PgnError& e) {
        out.push_back(std::string("error ") + e.what());
        continue;
      }
      Board b = g.start;
      std::string line = "game " + std::to_string(g.number) + " " + to_fen(g.start) + " " + g.result + " |";
      FUZZ_CHECK(g.result == "1-0" || g.result == "0-1" || g.result == "1/2-1/2" || g.result == "*");
      for (const auto& [name, value] : g.tags) {
        FUZZ_CHECK(pgmate::is_valid_utf8(value));
        line += " [" + name + "=" + value + "]";
      }
      for (Move m : g.moves) {
        if (!is_legal(b, m)) fail_with("illegal move in a game read", to_fen(b) + " " + to_uci(m));
        b.play(m);
        line += " " + to_uci(m);
      }
      out.push_back(std::move(line));
    }
  };
  for (std::size_t i = 0; i < text.size(); i += chunk) {
    reader.feed(text.substr(i, chunk));
    drain();
  }
  reader.finish();
  drain();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 1 << 16) return 0;
  const std::size_t chunk = 1 + data[0] % 16;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<std::string> whole = read_all(text, text.size() + 1);
  const std::vector<std::string> pieces = read_all(text, chunk);
  if (whole != pieces) {
    std::string detail = "chunk " + std::to_string(chunk) + "\n";
    for (std::size_t i = 0; i < std::max(whole.size(), pieces.size()); ++i)
      detail += "  whole:  " + (i < whole.size() ? whole[i] : "-") + "\n  pieces: " +
                (i < pieces.size() ? pieces[i] : "-") + "\n";
    fail_with("whole and chunked reading differ", detail);
  }
  // Skip mode gives the same games.
  int skipped = 0;
  const std::vector<PgnGame> games = parse_pgn(text, PgnErrorMode::kSkip, &skipped);
  std::size_t good = 0;
  for (const std::string& s : whole) good += s.starts_with("game ");
  FUZZ_CHECK(games.size() == good);
  FUZZ_CHECK(std::size_t(skipped) == whole.size() - good);
  return 0;
}
