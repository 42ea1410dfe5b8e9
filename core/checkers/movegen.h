// Checkers move generation, host and device.
//
// Captures are mandatory: when any piece of the side to move can jump, only complete jump
// sequences are generated (a sequence goes on while the piece can jump again; a man that
// reaches its crowning row is crowned and stops there). Simple moves, and single jumps
// that cannot go on, are found set-wise, a direction at a time; longer sequences by a
// depth-first walk with a fixed-size stack (no recursion, no containers), one sequence per
// distinct path (as the published perft counts have it: a king's two ways round the same
// loop are two moves). Moves go to a Sink, so the same code lists moves, counts them, and
// plays them for perft, which counts the last ply in bulk.
#pragma once

#include "checkers/board.h"

namespace pgmate::checkers {

// Sink that writes moves into a MoveList.
struct MoveListSink {
  MoveList& list;
  // Simple moves in direction d onto each square of `targets`; `kings` are the mover's
  // kings (a man reaching `crown` is crowned).
  PGMATE_HD void steps(Mask targets, int d, Mask kings, Mask crown) {
    const int back = 32 - shift_of(d);
    while (targets) {
      const Square to = pop_lsb(targets), from = (to + back) & 31;
      Move m{};
      m.from = std::uint8_t(from);
      m.to = std::uint8_t(to);
      m.crowns = !(kings & bit(from)) && (bit(to) & crown);
      list.push(m);
    }
  }
  // Single jumps in direction d onto each square of `targets` (each a whole move); a man
  // landing on `crown` is crowned.
  PGMATE_HD void single_jumps(Mask targets, int d, Mask crown) {
    const int back = 32 - shift_of(d);
    while (targets) {
      const Square to = pop_lsb(targets), over = (to + back) & 31;
      Move m{};
      m.captured = bit(over);
      m.from = std::uint8_t((over + back) & 31);
      m.to = std::uint8_t(to);
      m.captures = 1;
      m.crowns = (bit(to) & crown) != 0;
      list.push(m);
    }
  }
  // A complete jump sequence: land[0] is the start, land[1..n] the landing squares.
  PGMATE_HD void jump(const std::uint8_t* land, int n, Mask captured, bool crowns) {
    Move m{};
    m.captured = captured;
    m.from = land[0];
    m.to = land[n];
    m.captures = std::uint8_t(n);
    m.crowns = crowns;
    for (int i = 1; i < n; ++i) m.path[i - 1] = land[i];
    list.push(m);
  }
};

// Sink that only counts; under kLongest only the sequences taking the most pieces.
template <CaptureRule Rule>
struct MoveCountSink {
  std::uint64_t count = 0;
  int best = 0;  // most pieces taken by a sequence so far (kLongest)
  PGMATE_HD void steps(Mask targets, int, Mask, Mask) { count += popcount(targets); }
  PGMATE_HD void single_jumps(Mask targets, int, Mask) {
    if constexpr (Rule == CaptureRule::kLongest) {
      if (best > 1) return;
      best = 1;
    }
    count += popcount(targets);
  }
  PGMATE_HD void jump(const std::uint8_t*, int n, Mask, bool) {
    if constexpr (Rule == CaptureRule::kLongest) {
      if (n < best) return;
      if (n > best) {
        best = n;
        count = 0;
      }
    }
    ++count;
  }
};

// The pieces of `movers` that can jump in direction d (over one of `theirs` onto `open`).
PGMATE_HD PGMATE_FORCEINLINE Mask jumpers_toward(Mask movers, Mask theirs, Mask open, int d) {
  const int s = shift_of(d);
  const Mask over = rotl(movers & can_jump(d), s) & theirs;
  const Mask land = rotl(over, s) & open;
  return rotl(land, (64 - 2 * s) & 31);  // back two steps
}

// The directions (bit d for direction d, among d_first..d_end-1) in which the piece on s
// can jump: over one of `theirs` onto `open`.
PGMATE_HD PGMATE_FORCEINLINE unsigned jump_directions(Square s, int d_first, int d_end, Mask theirs, Mask open) {
  unsigned dirs = 0;
  for (int d = d_first; d < d_end; ++d) {
    const Square o = neighbour(s, d), t = neighbour(o, d);
    dirs |= ((can_jump(d) >> s) & (theirs >> o) & (open >> t) & 1u) << d;
  }
  return dirs;
}

// Every complete jump sequence of the piece on `from`. `open` holds the empty squares and
// `from` itself (a king may come back to where it started). A taken piece stays on the
// board until the move ends, so it is never jumped twice; it cannot block a landing either,
// since landing squares and the squares jumped over never share a (rank, file) parity.
// Depth first, with a fixed-size stack: at each level the directions still to try.
// `first` are the directions to try for the first jump.
template <class Sink>
PGMATE_HD inline void jump_sequences(Square from, bool king, Color us, Mask theirs, Mask open, unsigned first,
                                     Sink& sink) {
  const int d_first = king ? 0 : first_forward(us);
  const int d_end = king ? 4 : d_first + 2;
  const Mask crown = king ? 0 : crown_row(us);
  std::uint8_t land[kMaxCaptures + 1];     // land[0] = from, land[i] after the i-th capture
  std::uint8_t over[kMaxCaptures];         // over[i]: the square jumped from land[i]
  std::uint8_t pending[kMaxCaptures + 1];  // directions still to try from land[i]
  Mask remaining = theirs;
  int n = 0;
  land[0] = std::uint8_t(from);
  pending[0] = std::uint8_t(first);
  for (;;) {
    if (!pending[n]) {
      if (n == 0) return;
      --n;
      remaining ^= bit(over[n]);
      continue;
    }
    const int d = lsb(pending[n]);
    pending[n] &= pending[n] - 1;
    const Square o = neighbour(land[n], d), t = neighbour(o, d);
    over[n] = std::uint8_t(o);
    remaining ^= bit(o);
    land[++n] = std::uint8_t(t);
    // A man reaching its crowning row is crowned and the move ends there.
    const bool crowned = (bit(t) & crown) != 0;
    const unsigned dirs = crowned ? 0u : jump_directions(t, d_first, d_end, remaining, open);
    if (dirs) {
      pending[n] = std::uint8_t(dirs);
    } else {
      sink.jump(land, n, theirs & ~remaining, crowned);
      --n;
      remaining ^= bit(o);
    }
  }
}

// The squares pieces of `movers` land on jumping in direction d.
PGMATE_HD PGMATE_FORCEINLINE Mask jump_landings(Mask movers, Mask theirs, Mask open, int d) {
  const int s = shift_of(d);
  return rotl(rotl(movers & can_jump(d), s) & theirs, s) & open;
}

// The squares of x with a jump in one of the directions `dirs` (bit d for direction d).
PGMATE_HD PGMATE_FORCEINLINE Mask can_jump_on(Mask x, unsigned dirs, Mask theirs, Mask open) {
  Mask m = 0;
  for (int d = 0; d < 4; ++d)
    if (dirs & (1u << d)) m |= jumpers_toward(x, theirs, open, d);
  return m;
}

// The side to move is a template parameter, so every direction and shift is a constant.
template <Color Us, class Sink>
PGMATE_HD inline void generate_moves_for(const Board& b, Sink& sink) {
  constexpr Color us = Us;
  const Mask ours = b.pieces(Us), theirs = b.pieces(~Us), open = b.empty();
  const Mask kings = ours & b.kings, men = ours & ~kings;
  constexpr Mask crown = crown_row(Us);
  constexpr int fwd = first_forward(Us), back = fwd ^ 2;
  constexpr unsigned forward_dirs = 3u << fwd;

  // First jumps, set-wise by direction. A jump whose landing square allows no further
  // jump is a whole move, reported in bulk; the pieces whose first jump goes on walk the
  // tree (deep[d]: the pieces whose jump in direction d goes on). Checking the next jump
  // against the board before the first is fine: it cannot go back over the piece just
  // taken, and the start square, the only square the jump opens, is only reachable back.
  Mask deep[4] = {0, 0, 0, 0};
  bool any = false;
  auto first_jumps = [&](Mask movers, int d, bool king) {
    const Mask land = jump_landings(movers, theirs, open, d);
    if (!land) return;
    any = true;
    const unsigned next_dirs = king ? 15u & ~(1u << (3 - d)) : forward_dirs;
    const Mask uncrowned = king ? land : land & ~crown;
    const Mask goes_on = uncrowned & can_jump_on(uncrowned, next_dirs, theirs, open);
    if (land & ~goes_on) sink.single_jumps(land & ~goes_on, d, king ? 0 : crown);
    const int s = shift_of(d);
    deep[d] |= rotl(goes_on, (64 - 2 * s) & 31);
  };
  first_jumps(men, fwd, false);
  first_jumps(men, fwd + 1, false);
  if (kings) {
    first_jumps(kings, kNorthWest, true);
    first_jumps(kings, kNorthEast, true);
    first_jumps(kings, kSouthWest, true);
    first_jumps(kings, kSouthEast, true);
  }
  if (any) {
    for (Mask walkers = deep[0] | deep[1] | deep[2] | deep[3]; walkers;) {
      const Square s = pop_lsb(walkers);
      const unsigned first = ((deep[0] >> s) & 1u) | ((deep[1] >> s) & 1u) << 1 | ((deep[2] >> s) & 1u) << 2 |
                             ((deep[3] >> s) & 1u) << 3;
      jump_sequences(s, (kings & bit(s)) != 0, us, theirs, open | bit(s), first, sink);
    }
    return;
  }
  sink.steps(step(ours, fwd) & open, fwd, kings, crown);
  sink.steps(step(ours, fwd + 1) & open, fwd + 1, kings, crown);
  if (kings) {
    sink.steps(step(kings, back) & open, back, kings, crown);
    sink.steps(step(kings, back + 1) & open, back + 1, kings, crown);
  }
}

template <class Sink>
PGMATE_HD inline void generate_moves(const Board& b, Sink& sink) {
  if (b.side == kWhite)
    generate_moves_for<kWhite>(b, sink);
  else
    generate_moves_for<kBlack>(b, sink);
}

// Under kLongest, keeps only the sequences that take the most pieces (in place, in order).
PGMATE_HD inline void keep_longest(MoveList& list) {
  int best = 0;
  for (int i = 0; i < list.size; ++i)
    if (list.moves[i].captures > best) best = list.moves[i].captures;
  int kept = 0;
  for (int i = 0; i < list.size; ++i)
    if (list.moves[i].captures == best) list.moves[kept++] = list.moves[i];
  list.size = kept;
}

PGMATE_HD inline void legal_moves(const Board& b, MoveList& list, CaptureRule rule = CaptureRule::kAny) {
  list.size = 0;
  MoveListSink sink{list};
  generate_moves(b, sink);
  if (rule == CaptureRule::kLongest && list.size > 0 && list.moves[0].captures > 0) keep_longest(list);
}

template <CaptureRule Rule = CaptureRule::kAny>
PGMATE_HD inline std::uint64_t count_legal_moves(const Board& b) {
  MoveCountSink<Rule> sink;
  generate_moves(b, sink);
  return sink.count;
}

PGMATE_HD inline std::uint64_t count_legal_moves(const Board& b, CaptureRule rule) {
  return rule == CaptureRule::kLongest ? count_legal_moves<CaptureRule::kLongest>(b)
                                       : count_legal_moves<CaptureRule::kAny>(b);
}

// Whether the side to move has any move (set-wise, no jump sequences walked).
PGMATE_HD inline bool has_legal_move(const Board& b) {
  const Color us = b.side;
  const Mask ours = b.pieces(us), theirs = b.pieces(~us), open = b.empty();
  const Mask kings = ours & b.kings;
  const int fwd = first_forward(us), back = fwd ^ 2;
  return ((step(ours, fwd) | step(ours, fwd + 1) | step(kings, back) | step(kings, back + 1)) & open) ||
         jumpers_toward(ours, theirs, open, fwd) || jumpers_toward(ours, theirs, open, fwd + 1) ||
         jumpers_toward(kings, theirs, open, back) || jumpers_toward(kings, theirs, open, back + 1);
}

// A side that cannot move (no pieces left, or all blocked) has lost. No draw rule is
// applied here (repetition or move limits belong to a game record, not a position).
enum class Status : std::uint8_t { kOngoing = 0, kBlackWins = 1, kWhiteWins = 2 };

PGMATE_HD inline Status status(const Board& b) {
  if (has_legal_move(b)) return Status::kOngoing;
  return b.side == kWhite ? Status::kBlackWins : Status::kWhiteWins;
}

// Perft with bulk counting at the last ply. The moves of inner nodes are played as the
// generator finds them (PerftSink), never stored.
template <CaptureRule Rule = CaptureRule::kAny>
PGMATE_HD std::uint64_t perft(const Board& b, int depth);

template <CaptureRule Rule>
struct PerftSink {
  const Board& parent;
  int depth;  // of the children
  std::uint64_t nodes = 0;
  int best = 0;  // most pieces taken by a sequence so far (kLongest)

  PGMATE_HD PGMATE_FORCEINLINE void child(Square from, Square to, Mask captured, bool crowns) {
    Board next = parent;
    next.play(from, to, captured, crowns);
    nodes += perft<Rule>(next, depth);
  }
  PGMATE_HD void steps(Mask targets, int d, Mask kings, Mask crown) {
    const int back = 32 - shift_of(d);
    while (targets) {
      const Square to = pop_lsb(targets), from = (to + back) & 31;
      child(from, to, 0, !(kings & bit(from)) && (bit(to) & crown));
    }
  }
  PGMATE_HD void single_jumps(Mask targets, int d, Mask crown) {
    if constexpr (Rule == CaptureRule::kLongest) {
      if (best > 1) return;
      best = 1;
    }
    const int back = 32 - shift_of(d);
    while (targets) {
      const Square to = pop_lsb(targets), over = (to + back) & 31;
      child((over + back) & 31, to, bit(over), (bit(to) & crown) != 0);
    }
  }
  PGMATE_HD void jump(const std::uint8_t* land, int n, Mask captured, bool crowns) {
    if constexpr (Rule == CaptureRule::kLongest) {
      if (n < best) return;
      if (n > best) {
        best = n;
        nodes = 0;
      }
    }
    child(land[0], land[n], captured, crowns);
  }
};

template <CaptureRule Rule>
PGMATE_HD std::uint64_t perft(const Board& b, int depth) {
  if (depth <= 0) return 1;
  if (depth == 1) return count_legal_moves<Rule>(b);
  PerftSink<Rule> sink{b, depth - 1};
  generate_moves(b, sink);
  return sink.nodes;
}

PGMATE_HD inline std::uint64_t perft(const Board& b, int depth, CaptureRule rule) {
  return rule == CaptureRule::kLongest ? perft<CaptureRule::kLongest>(b, depth) : perft<CaptureRule::kAny>(b, depth);
}

}  // namespace pgmate::checkers
