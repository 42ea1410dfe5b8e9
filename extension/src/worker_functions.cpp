// SQL functions served by pgmate-worker: evaluate(), worker_status(), legal_moves_batch(),
// perft on the worker, and network weights. The extension itself never links CUDA or Torch.
#include <optional>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/notation.h"
#include "chess/perft.h"
#include "common/text.h"
#include "datum.h"
#include "networks.h"
#include "worker_link.h"

extern "C" {
#include "miscadmin.h"
}

using namespace pgmate;

namespace {

worker::Device device_arg(const std::string& device) {
  if (device == "gpu") return worker::Device::kGpu;
  if (device == "worker") return worker::Device::kAuto;
  throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                     "device must be 'cpu' (this backend), 'gpu' or 'worker' (pgmate-worker), not " +
                         quote_input(device, 40));
}

std::vector<chess::Board> boards_arg(FunctionCallInfo fcinfo, int n, const char* what) {
  std::vector<chess::Board> boards;
  for (Datum d : pg::array_elements(fcinfo, n, what)) boards.push_back(pg::board_from_datum(d));
  return boards;
}

}  // namespace

// perft(board, depth int, device text): 'cpu' runs here, 'gpu'/'worker' on pgmate-worker.
PGMATE_FUNCTION(board_perft_on_worker) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const int depth = PG_GETARG_INT32(1);
  const std::string device_name = pg::text_arg(fcinfo, 2);
  if (depth < 0 || depth > 15)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "perft depth " + std::to_string(depth) + " is out of range (0 to 15)");
  if (device_name == "cpu") return Int64GetDatum(int64(chess::perft_polling(b, depth, pg::check_for_interrupts)));
  const worker::Device device = device_arg(device_name);
  pg::check_worker_perft_depth(depth, false);
  const std::uint64_t nodes = pg::with_worker([&](worker::WorkerClient& c) { return c.perft(b, depth, device); });
  return Int64GetDatum(int64(nodes));
}

// legal_moves_batch(board[]) -> SETOF (idx int, moves move[]): legal moves of many boards
// in one round trip to the worker.
PGMATE_FUNCTION(worker_legal_moves_batch) {
  const std::vector<chess::Board> boards = boards_arg(fcinfo, 0, "boards");
  const auto lists = pg::with_worker([&](worker::WorkerClient& c) { return c.legal_moves_batch(boards); });
  pg::pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const Oid move_type = pg::column_element_type(rsinfo->setDesc, 1);
  for (size_t i = 0; i < lists.size(); ++i) {
    std::vector<Datum> moves;
    for (chess::Move m : lists[i]) moves.push_back(pg::move_to_datum(m));
    const Datum array = pg::make_array(moves, move_type);
    pg::pg_call([&] {
      Datum values[2] = {Int32GetDatum(int32(i + 1)), array};
      bool nulls[2] = {false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    });
  }
  return Datum(0);
}

// evaluate(boards board[], network bigint, history board[][] DEFAULT NULL,
//          repetitions int[] DEFAULT NULL)
//   -> SETOF (idx int, win real, draw real, loss real, moves move[], priors real[],
//             network_id bigint, weights_sha256 bytea)
// history[i] holds up to 3 earlier positions of boards[i], newest first (NULLs pad);
// repetitions[i] how often boards[i] occurred before in its game. Every call reads the
// network's row as the caller, so only a role that may read it evaluates with it, and the
// worker is asked for exactly the row's current weights.
PGMATE_FUNCTION(worker_evaluate) {
  if (PG_ARGISNULL(1))
    throw pg::SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED,
                       "evaluate needs a network: the id of a row of pgmate.networks (pgmate.init_network makes one)");
  const std::int64_t network = PG_GETARG_INT64(1);
  worker::NetworkKey key = pg::network_key(network);  // privileges, existence, current version
  if (PG_ARGISNULL(0)) {  // no boards: no rows
    pg::pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
    return Datum(0);
  }
  const std::vector<chess::Board> boards = boards_arg(fcinfo, 0, "boards");
  std::vector<worker::EvalInput> inputs(boards.size());
  for (size_t i = 0; i < boards.size(); ++i) inputs[i].history.push_back(boards[i]);
  if (!PG_ARGISNULL(2)) {
    ArrayType* history = pg::pg_call([&] { return PG_GETARG_ARRAYTYPE_P(2); });
    const int ndim = ARR_NDIM(history);
    if (ndim != 0) {
      if (ndim != 2 || ARR_DIMS(history)[0] != int(boards.size()))
        throw pg::SqlError(ERRCODE_ARRAY_SUBSCRIPT_ERROR,
                           "history must be a two-dimensional array with one row per board (" +
                               std::to_string(boards.size()) + " rows)");
      const int per_row = ARR_DIMS(history)[1];
      Datum* values = nullptr;
      bool* nulls = nullptr;
      int count = 0;
      pg::pg_call([&] { deconstruct_array(history, ARR_ELEMTYPE(history), 32, false, 'c', &values, &nulls, &count); });
      for (size_t i = 0; i < boards.size(); ++i)
        for (int j = 0; j < per_row && j < 3; ++j)
          if (!nulls[i * per_row + j]) inputs[i].history.push_back(pg::board_from_datum(values[i * per_row + j]));
    }
  }
  if (PG_NARGS() > 3 && !PG_ARGISNULL(3)) {  // (0.3.0's evaluate had no repetitions)
    const std::vector<Datum> counts = pg::array_elements(fcinfo, 3, "repetitions");
    if (counts.size() != boards.size())
      throw pg::SqlError(ERRCODE_ARRAY_SUBSCRIPT_ERROR, "repetitions must have one count per board (" +
                                                            std::to_string(boards.size()) + "), not " +
                                                            std::to_string(counts.size()));
    for (size_t i = 0; i < counts.size(); ++i) {
      const int n = DatumGetInt32(counts[i]);
      if (n < 0)
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                           "repetitions[" + std::to_string(i + 1) + "] is negative (" + std::to_string(n) + ")");
      inputs[i].repetitions = n;
    }
  }

  auto reply = pg::with_worker([&](worker::WorkerClient& c) -> std::optional<worker::EvalReply> {
    try {
      return c.evaluate(inputs, key);
    } catch (const worker::NetworkNotLoaded&) {
      return std::nullopt;
    }
  });
  if (!reply) {
    // First use, evicted, or a restarted worker: hand it the row and ask again.
    const pg::NetworkRow row = pg::read_network(network);
    key = row.key;
    reply = pg::with_worker([&](worker::WorkerClient& c) {
      c.load_network(row.key, row.config, row.weights);
      return c.evaluate(inputs, key);
    });
  }
  const Datum sha256 = pg::pg_call([&] {
    bytea* out = static_cast<bytea*>(palloc(VARHDRSZ + reply->network.sha256.size()));
    SET_VARSIZE(out, VARHDRSZ + reply->network.sha256.size());
    memcpy(VARDATA(out), reply->network.sha256.data(), reply->network.sha256.size());
    return PointerGetDatum(out);
  });

  pg::pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const Oid move_type = pg::column_element_type(rsinfo->setDesc, 4);
  for (size_t i = 0; i < reply->outputs.size(); ++i) {
    const worker::EvalOutput& o = reply->outputs[i];
    std::vector<Datum> moves, priors;
    for (chess::Move m : o.moves) moves.push_back(pg::move_to_datum(m));
    for (float p : o.priors) priors.push_back(Float4GetDatum(p));
    const Datum move_array = pg::make_array(moves, move_type);
    const Datum prior_array = pg::make_array(priors, FLOAT4OID);
    pg::pg_call([&] {
      Datum values[8] = {Int32GetDatum(int32(i + 1)), Float4GetDatum(o.win), Float4GetDatum(o.draw),
                         Float4GetDatum(o.loss), move_array, prior_array, Int64GetDatum(reply->network.id), sha256};
      bool nulls[8] = {false, false, false, false, false, false, false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    });
  }
  return Datum(0);
}

// worker_status() -> jsonb: what the worker reports (device, networks held, queue depth,
// batches, mean batch size, positions/s, ...). Networks of other databases are listed to
// superusers only.
PGMATE_FUNCTION(worker_status) {
  const std::uint32_t database = superuser() ? 0 : std::uint32_t(MyDatabaseId);
  const std::string json = pg::with_worker([&](worker::WorkerClient& c) { return c.status_json(database); });
  return pg::pg_call([&] { return DirectFunctionCall1(jsonb_in, CStringGetDatum(json.c_str())); });
}

// pgmate.network_init_weights(config jsonb, seed bigint) -> bytea: fresh random weights made
// by the worker (the extension has no Torch).
PGMATE_FUNCTION(worker_init_weights) {
  const std::string config = pg::text_arg(fcinfo, 0);
  const std::uint64_t seed = std::uint64_t(PG_GETARG_INT64(1));
  const std::string weights = pg::with_worker([&](worker::WorkerClient& c) { return c.init_network_weights(config, seed); });
  return pg::pg_call([&] {
    bytea* out = static_cast<bytea*>(palloc(VARHDRSZ + weights.size()));
    SET_VARSIZE(out, VARHDRSZ + weights.size());
    memcpy(VARDATA(out), weights.data(), weights.size());
    return PointerGetDatum(out);
  });
}

// pgmate.load_network(id bigint) -> bool: hands the worker that network now (it is held
// with the others, least recently used out first).
PGMATE_FUNCTION(worker_load_network) {
  const pg::NetworkRow row = pg::read_network(PG_GETARG_INT64(0));
  pg::with_worker([&](worker::WorkerClient& c) { c.load_network(row.key, row.config, row.weights); });
  return BoolGetDatum(true);
}
