#include <iostream>

#include "args.h"
#include "chess/notation.h"
#include "commands.h"

namespace pgmate::cli {

const char* const kMovesUsage = "pgmate moves FEN|startpos    list the legal moves (UCI and SAN)";

int moves_command(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("a position is required");
  for (const auto& a : args)
    if (a.size() > 1 && a[0] == '-' && a[1] == '-') throw UsageError("unknown option " + a);
  const chess::Board board = chess::parse_fen(join(args, 0, args.size()));
  chess::MoveList list;
  chess::legal_moves(board, list);
  for (chess::Move m : list) std::cout << chess::to_uci(m) << ' ' << chess::to_san(board, m) << '\n';
  std::cout << list.size << " legal move" << (list.size == 1 ? "" : "s") << '\n';
  return 0;
}

}  // namespace pgmate::cli
