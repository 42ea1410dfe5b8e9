// The rows of a training query, read through SPI as the worker's training samples. By
// column name:
//   board board                   the position (required)
//   history board[]               up to 3 earlier positions, newest first (NULL or empty allowed)
//   repetitions int               earlier occurrences of board in its game (default 0)
//   played move                   the target move (one-hot), or
//   moves move[] + policy real[]  a target distribution over those moves
//   z real                        the result from the side to move (1, 0, -1), or
//   wdl real[]                    win, draw, loss targets
//   weight real                   the row's weight (default 1)
// A missing column or one of the wrong type is SQLSTATE 42804 naming it, before any row is
// read; a bad row (NULL board, a target move that is not legal, ...) is 22023 naming its
// number, and so is a row the worker's encoder refuses (a value beyond real's range, a target
// move given twice, ...): whoever reads rows here refuses what training refuses. Needs an
// SPI connection; the cursor lives until the reader is destroyed or the
// transaction ends.
#pragma once

#include <cstdint>
#include <string>

#include "procedure.h"
#include "link/protocol.h"

extern "C" {
#include "executor/spi.h"
}

namespace pgmate::pg {

// pgmate.train_max_rows: the most rows (training and held-out together) one training holds
// in backend memory, about 160 bytes each with a one-hot target.
extern int train_max_rows;

struct TrainingRow {
  worker::protocol::TrainSample sample;  // targets as given (not normalised)
  bool has_value = false;                // z or wdl was there (else sample.wdl is a draw)
  worker::protocol::Bytes encoded;       // the sample as protocol::encode_train_sample writes it
};

class TrainingRows {
 public:
  // `what` names the query in messages ("training data", "holdout"). need_value: z or wdl
  // is required.
  TrainingRows(const std::string& query, bool need_value, std::string what = "training data");
  ~TrainingRows();
  TrainingRows(const TrainingRows&) = delete;
  TrainingRows& operator=(const TrainingRows&) = delete;

  // The next row; false after the last. Checks for interrupts between chunks.
  bool next(TrainingRow& out);
  std::int64_t row_number() const { return row_; }
  // Closes the cursor (before SPI_finish); the destructor does it otherwise.
  void close();

 private:
  struct Columns {
    int board = 0, history = 0, repetitions = 0, played = 0, moves = 0, policy = 0, z = 0, wdl = 0, weight = 0;
  };
  void fetch();
  void check_columns(TupleDesc desc);
  [[noreturn]] void bad_row(const std::string& why) const;

  std::string what_;
  bool need_value_;
  SqlTypes types_;
  Portal portal_ = nullptr;
  bool columns_checked_ = false;
  Columns c_;
  SPITupleTable* table_ = nullptr;
  std::uint64_t in_table_ = 0, next_in_table_ = 0;
  bool done_ = false;
  std::int64_t row_ = 0;
};

}  // namespace pgmate::pg
