// The position index (extension/sql/82_position_index.sql): kept by a statement trigger on
// pgmate.games, searched by position_games, position_count and explorer. The entries,
// blocks and merging are core/gamedb's; this file moves them in and out of tables.
//
// Concurrency: writers of new runs (inserts) hold the index's lock in share mode, so they
// run side by side; anything that rewrites or removes runs (merges, deletes, updates,
// truncates, rebuilds) holds it exclusively. Automatic merges happen only when the lock is
// free at once and the transaction reads with fresh snapshots (READ COMMITTED), so an
// insert never waits or fails because of one. The lock is a table's (pgmate.position_index_lock,
// never written): ROW EXCLUSIVE for share, SHARE ROW EXCLUSIVE for exclusive. Taking either
// with LOCK TABLE needs a privilege on it that no role is granted, where an advisory lock
// is open to every role.
//
// Only this code writes the index's tables: the trigger and the maintenance functions are
// SECURITY DEFINER, so adding games needs no privilege on the index, and whatever a caller
// passes, the blocks are made from the rows of pgmate.games. A bulk import sets
// pgmate.position_index_deferred_merges and merges once at its end instead: a million
// games in runs of ten thousand would otherwise be rewritten at every level.
#include "position_index.h"

#include "position_counts.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "chess/notation.h"
#include "datum.h"
#include "gamedb/position_index.h"
#include "guard.h"
#include "pg_headers.h"

extern "C" {
#include "access/genam.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
}

namespace pgmate {

bool pg::position_index_deferred_merges = false;

namespace {

using gamedb::BlockView;
using gamedb::PositionEntry;
using gamedb::PackedEntry;
using pg::pg_call;
using pg::pinned_sql;

constexpr int kFanout = 4;                            // runs of one level merged together
constexpr std::size_t kRebuildChunk = 20000;           // games per run while rebuilding
constexpr std::size_t kRewriteLimit = 2000;            // more deleted games: rebuild instead

using pg::sql_key;

// ------------------------------------------------------------------ SPI, briefly
// Everything that maintains the index runs its queries read-write (read_only false): each
// then sees what the trigger wrote before it, such as a run about to be merged.

void spi_exec(const char* sql, int nargs = 0, Oid* types = nullptr, Datum* values = nullptr, bool read_only = false) {
  pinned_sql([&] {
    const int rc = SPI_execute_with_args(sql, nargs, types, values, nullptr, read_only, 0);
    if (rc < 0) elog(ERROR, "position index: SPI error %s in: %s", SPI_result_code_string(rc), sql);
  });
}

std::int64_t spi_int8(int row, int column) {
  return pg_call([&] {
    bool is_null;
    const Datum d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column, &is_null);
    return is_null ? std::int64_t{0} : DatumGetInt64(d);
  });
}

// A bytea column of an SPI row, detoasted, as a block.
std::pair<const void*, std::size_t> spi_bytes(HeapTuple row, TupleDesc desc, int column) {
  return pg_call([&] {
    bool is_null;
    const Datum d = SPI_getbinval(row, desc, column, &is_null);
    if (is_null) elog(ERROR, "position index: a block without data");
    bytea* b = DatumGetByteaPP(d);
    return std::pair<const void*, std::size_t>(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
  });
}

// Runs of level kPending are parts of a parallel merge not yet published: invisible to
// searches and merges. Whoever changes the index's runs (the exclusive lock) drops them,
// so that a part never outlives a change to the runs it was merged from: its publication
// then fails, and nothing is lost (the runs it came from are still there).
constexpr int kPending = -1;
// Runs of level kRetired were merged into published parts: invisible too, their blocks
// removed by position_index_clean on several connections at once (a million games' runs
// take seconds to delete), or else by the next change to the index.
constexpr int kRetired = -2;

// A run and where its blocks are: a bulk import's runs (pgmate.position_index_deferred_merges)
// are staged in position_staged_blocks until its final merge, which then empties that
// table at once (position_index_clean).
struct RunRef {
  std::int64_t id;
  bool staged;
};
const char* blocks_relname(bool staged) { return staged ? "position_staged_blocks" : "position_blocks"; }
// The table's name for SQL, schema included.
const char* blocks_table(bool staged) {
  static const std::string names[2] = {std::string("pgmate.") + blocks_relname(false),
                                       std::string("pgmate.") + blocks_relname(true)};
  return names[staged ? 1 : 0].c_str();
}
// The table's OID, locked in `lock` (NoLock: only looked up).
Oid blocks_relation(bool staged, LOCKMODE lock) {
  return pg_call([&] {
    return RangeVarGetRelid(makeRangeVar(const_cast<char*>("pgmate"), const_cast<char*>(blocks_relname(staged)), -1),
                            lock, false);
  });
}

Datum int8_array(const std::vector<std::int64_t>& values) {
  std::vector<Datum> d;
  for (std::int64_t v : values) d.push_back(Int64GetDatum(v));
  return pg_call([&] {
    return PointerGetDatum(construct_array(d.data(), static_cast<int>(d.size()), INT8OID, 8, true, TYPALIGN_DOUBLE));
  });
}

// Removes the runs that meet `condition` (SQL over position_runs) with their blocks;
// returns how many.
std::int64_t delete_runs(const std::string& condition, int nargs = 0, Oid* types = nullptr, Datum* values = nullptr) {
  spi_exec(("SELECT count(*), count(*) FILTER (WHERE staged), coalesce(array_agg(id), '{}') FROM pgmate.position_runs "
            "WHERE " + condition).c_str(),
           nargs, types, values);
  const std::int64_t count = spi_int8(0, 1), staged = spi_int8(0, 2);
  if (count == 0) return 0;
  Datum runs[1] = {pg_call([] {
    bool is_null;
    return PointerGetDatum(DatumGetArrayTypePCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &is_null)));
  })};
  Oid array_type[1] = {INT8ARRAYOID};
  const auto delete_blocks = [&](bool in_staged) {
    spi_exec((std::string("DELETE FROM ") + blocks_table(in_staged) + " WHERE run_id = ANY ($1)").c_str(), 1,
             array_type, runs);
  };
  if (staged < count) delete_blocks(false);
  // Only when there are some: a lock on that table would keep an import's clean from
  // emptying it at once.
  if (staged > 0) delete_blocks(true);
  spi_exec("DELETE FROM pgmate.position_runs WHERE id = ANY ($1)", 1, array_type, runs);
  return count;
}

// Parts not published and retired runs.
void drop_pending_parts() { delete_runs("level < 0"); }

Oid pgmate_relation(const char* name, bool missing_ok = false) {
  return pg_call([&] {
    return RangeVarGetRelid(makeRangeVar(const_cast<char*>("pgmate"), const_cast<char*>(name), -1), NoLock,
                            missing_ok);
  });
}

// The table whose lock is the index's. An upgrade from before 0.9.0 rebuilds the index
// (0.8.0's script) before the lock's table exists: in that one transaction, position_runs.
Oid index_lock_relation() {
  const Oid lock = pgmate_relation("position_index_lock", /*missing_ok=*/true);
  return OidIsValid(lock) ? lock : pgmate_relation("position_runs");
}

// The two modes conflict with each other and the exclusive one with itself; neither
// conflicts with ACCESS SHARE, the one mode LOCK TABLE grants for SELECT alone.
constexpr LOCKMODE kSharedIndexLock = RowExclusiveLock, kExclusiveIndexLock = ShareRowExclusiveLock;

void lock_index(bool exclusive, bool keep_pending = false) {
  const Oid lock = index_lock_relation();
  pg_call([&] { LockRelationOid(lock, exclusive ? kExclusiveIndexLock : kSharedIndexLock); });
  if (exclusive && !keep_pending) drop_pending_parts();
}

bool try_lock_index() {
  const Oid lock = index_lock_relation();
  const bool locked = pg_call([&] { return ConditionalLockRelationOid(lock, kExclusiveIndexLock); });
  if (locked) drop_pending_parts();
  return locked;
}

// ------------------------------------------------------------------ writing runs

// Writes blocks as they fill; finish() stores the run's totals.
class RunWriter {
 public:
  RunWriter(int level, bool staged) : staged_(staged), level_(level) {
    Oid types[2] = {INT4OID, BOOLOID};
    Datum values[2] = {Int32GetDatum(level), BoolGetDatum(staged)};
    spi_exec("INSERT INTO pgmate.position_runs (level, entries, blocks, staged) VALUES ($1, 0, 0, $2) RETURNING id", 2,
             types, values);
    run_ = spi_int8(0, 1);
  }

  void add(const PositionEntry& e) {
    if (!block_.add(e)) {
      flush();
      block_.add(e);
    }
  }

  std::int64_t id() const { return run_; }

  // Stores the run's totals; a run left empty is removed, but for a part of a parallel
  // merge, whose row says that its share of the keys is empty. Returns the entries written.
  std::uint64_t finish() {
    flush();
    store();
    Oid types[3] = {INT8OID, INT8OID, INT4OID};
    Datum values[3] = {Int64GetDatum(run_), Int64GetDatum(static_cast<std::int64_t>(entries_)), Int32GetDatum(blocks_)};
    spi_exec(entries_ == 0 && level_ != kPending ? "DELETE FROM pgmate.position_runs WHERE id = $1 AND $2 = 0 AND $3 = 0"
                           : "UPDATE pgmate.position_runs SET entries = $2, blocks = $3 WHERE id = $1",
             3, types, values);
    return entries_;
  }

 private:
  // Blocks go to the table kStoreBlocks at a time, in one statement: a million games make
  // hundreds of thousands of blocks, and a statement each costs more than the row.
  static constexpr std::size_t kStoreBlocks = 256;

  void flush() {
    if (block_.empty()) return;
    pg::check_for_interrupts();
    first_keys_.push_back(sql_key(block_.first_key()));
    last_keys_.push_back(sql_key(block_.last_key()));
    entries_ += block_.entries();
    data_.push_back(block_.take());
    if (data_.size() == kStoreBlocks) store();
  }

  // Straight into the table and its primary key as COPY does (one multi-insert, then the
  // index entries), not through an INSERT statement: executing one cost more than writing
  // its rows (perf: 16% of the server's time in an import went to storing blocks, a third
  // of it the statement's own work). The privilege an INSERT would need is still checked.
  void store() {
    if (data_.empty()) return;
    pg_call([&] {
      const Oid relid = blocks_relation(staged_, RowExclusiveLock);
      const AclResult acl = pg_class_aclcheck(relid, GetUserId(), ACL_INSERT);
      if (acl != ACLCHECK_OK) aclcheck_error(acl, OBJECT_TABLE, const_cast<char*>(blocks_relname(staged_)));
      MemoryContext memory = AllocSetContextCreate(CurrentMemoryContext, "position index blocks", ALLOCSET_DEFAULT_SIZES);
      MemoryContext caller = MemoryContextSwitchTo(memory);
      Relation rel = table_open(relid, NoLock);  // locked above
      const TupleDesc desc = RelationGetDescr(rel);
      // The values below go by column number: (run_id, first_key, seq, last_key, data).
      constexpr Oid kTypes[5] = {INT8OID, INT8OID, INT4OID, INT8OID, BYTEAOID};
      bool as_made = desc->natts == 5;
      for (int i = 0; as_made && i < 5; ++i)
        as_made = !TupleDescAttr(desc, i)->attisdropped && TupleDescAttr(desc, i)->atttypid == kTypes[i];
      if (!as_made) elog(ERROR, "position index: %s is not as the extension made it", blocks_table(staged_));
      EState* estate = CreateExecutorState();
      ResultRelInfo* info = makeNode(ResultRelInfo);
      InitResultRelInfo(info, rel, 1, nullptr, 0);
      ExecOpenIndices(info, false);
      const int n = static_cast<int>(data_.size());
      auto** slots = static_cast<TupleTableSlot**>(palloc(sizeof(TupleTableSlot*) * n));
      for (int i = 0; i < n; ++i) {
        TupleTableSlot* slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
        bytea* b = static_cast<bytea*>(palloc(VARHDRSZ + data_[i].size()));
        SET_VARSIZE(b, VARHDRSZ + data_[i].size());
        std::memcpy(VARDATA(b), data_[i].data(), data_[i].size());
        slot->tts_values[0] = Int64GetDatum(run_);
        slot->tts_values[1] = Int64GetDatum(first_keys_[i]);
        slot->tts_values[2] = Int32GetDatum(blocks_ + i);
        slot->tts_values[3] = Int64GetDatum(last_keys_[i]);
        slot->tts_values[4] = PointerGetDatum(b);
        std::fill_n(slot->tts_isnull, 5, false);
        ExecStoreVirtualTuple(slot);
        slots[i] = slot;
      }
      table_multi_insert(rel, slots, n, GetCurrentCommandId(true), 0, nullptr);
      for (int i = 0; i < n; ++i) {
        ResetPerTupleExprContext(estate);
        ExecInsertIndexTuples(info, slots[i], estate, false, false, nullptr, NIL);
        ExecDropSingleTupleTableSlot(slots[i]);
      }
      ExecCloseIndices(info);
      FreeExecutorState(estate);
      table_close(rel, NoLock);
      MemoryContextSwitchTo(caller);
      MemoryContextDelete(memory);
      CommandCounterIncrement();  // as a statement would: what follows sees the blocks
    });
    blocks_ += static_cast<int>(data_.size());
    first_keys_.clear();
    last_keys_.clear();
    data_.clear();
  }

  bool staged_;
  int level_;
  std::int64_t run_ = 0;
  gamedb::BlockBuilder block_;
  std::vector<std::int64_t> first_keys_, last_keys_;  // of the blocks not yet stored
  std::vector<std::string> data_;
  std::uint64_t entries_ = 0;
  int blocks_ = 0;  // stored so far
};

std::uint64_t write_run(int level, const std::vector<PositionEntry>& sorted, bool staged = false) {
  if (sorted.empty()) return 0;
  RunWriter w(level, staged);
  for (const auto& e : sorted) w.add(e);
  return w.finish();
}

// ------------------------------------------------------------------ reading runs

// The entries of one run in order, a block at a time, read by a scan of the blocks'
// primary key (run_id, first_key, seq) in its order. Not a query: a planner that knows a
// run's blocks to be many reads the whole table and sorts it for each run (a merge opens
// a reader per run), and that plan it chose as soon as statistics existed.
class RunReader {
 public:
  // The blocks that may hold keys from `low` to `high` (SQL keys, both included): all of
  // them by default. Sees what this transaction wrote before, as a query would.
  explicit RunReader(RunRef run, std::int64_t low = INT64_MIN, std::int64_t high = INT64_MAX) : low_(low) {
    const Oid relation = blocks_relation(run.staged, AccessShareLock);
    pg_call([&] {
      CommandCounterIncrement();
      snapshot_ = RegisterSnapshot(GetTransactionSnapshot());
      heap_ = table_open(relation, AccessShareLock);
      const TupleDesc desc = RelationGetDescr(heap_);
      AttrNumber first_key_column = 0;
      for (int i = 0; i < desc->natts; ++i) {
        const Form_pg_attribute a = TupleDescAttr(desc, i);
        if (a->attisdropped) continue;
        if (std::strcmp(NameStr(a->attname), "first_key") == 0) first_key_column = a->attnum;
        if (std::strcmp(NameStr(a->attname), "last_key") == 0) last_key_column_ = a->attnum;
        if (std::strcmp(NameStr(a->attname), "data") == 0) data_column_ = a->attnum;
      }
      const Oid primary_key = RelationGetPrimaryKeyIndex(heap_);
      if (primary_key == InvalidOid || first_key_column == 0 || last_key_column_ == 0 || data_column_ == 0)
        elog(ERROR, "position index: %s is not as the extension made it", blocks_table(run.staged));
      index_ = index_open(primary_key, AccessShareLock);
      slot_ = table_slot_create(heap_, nullptr);
      ScanKeyData keys[3];
      ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(run.id));
      // Blocks from the last one that starts before `low` (the blocks before it end before
      // `low` too), so that a parallel merge's upper part does not read the lower part's.
      // Not the last one that starts at `low`: a key's entries may begin in the block before.
      std::int64_t from = INT64_MIN;
      if (low != INT64_MIN) {
        ScanKeyInit(&keys[1], 2, BTLessStrategyNumber, F_INT8LT, Int64GetDatum(low));
        IndexScanDesc back = index_beginscan(heap_, index_, snapshot_, 2, 0);
        index_rescan(back, keys, 2, nullptr, 0);
        bool is_null;
        if (index_getnext_slot(back, BackwardScanDirection, slot_))
          from = DatumGetInt64(slot_getattr(slot_, first_key_column, &is_null));
        index_endscan(back);
      }
      ScanKeyInit(&keys[1], 2, BTGreaterEqualStrategyNumber, F_INT8GE, Int64GetDatum(from));
      ScanKeyInit(&keys[2], 2, BTLessEqualStrategyNumber, F_INT8LE, Int64GetDatum(high));
      scan_ = index_beginscan(heap_, index_, snapshot_, 3, 0);
      index_rescan(scan_, keys, 3, nullptr, 0);
    });
    load();
  }

  bool done() const { return at_ >= entries_.size(); }
  const PositionEntry& head() const { return entries_[at_]; }
  // The next entry, packed; kNoEntry at the end of the run.
  PackedEntry next() {
    if (++at_ >= entries_.size()) load();
    if (done()) return gamedb::kNoEntry;
    // This run's turn comes again about a run count of entries later, by when the merge's
    // writing has pushed its entries out of the cache: ask for the ones after next now.
    __builtin_prefetch(entries_.data() + at_ + 4);
    return gamedb::pack(entries_[at_]);
  }

 private:
  // One block decoded at a time: a merge reads a hundred runs at once, and their decoded
  // blocks (about 3 KiB each) then stay in the cache between turns. Sixty-four blocks a
  // run (20 MB in all) missed it on nearly every entry taken.
  void load() {
    entries_.clear();
    at_ = 0;
    if (!scan_) return;
    pg::check_for_interrupts();
    for (;;) {
      // The next block's bytes, valid until the next fetch; none at the end of the run.
      const auto [data, size] = pg_call([&] {
        while (index_getnext_slot(scan_, ForwardScanDirection, slot_)) {
          bool is_null;
          // The scan stops at the range's last block; blocks ending before it are skipped.
          if (DatumGetInt64(slot_getattr(slot_, last_key_column_, &is_null)) < low_) continue;
          const Datum d = slot_getattr(slot_, data_column_, &is_null);
          if (is_null) elog(ERROR, "position index: a block without data");
          bytea* b = DatumGetByteaPP(d);
          return std::pair<const void*, std::size_t>(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
        }
        close();
        return std::pair<const void*, std::size_t>(nullptr, 0);
      });
      if (!data) return;
      gamedb::decode_block(data, size, entries_);
      if (!entries_.empty()) return;
    }
  }

  // At the end of the run (inside pg_call). A reader left before its end (an error) is
  // cleaned up with the transaction.
  void close() {
    ExecDropSingleTupleTableSlot(slot_);
    index_endscan(scan_);
    index_close(index_, AccessShareLock);
    table_close(heap_, AccessShareLock);
    UnregisterSnapshot(snapshot_);
    scan_ = nullptr;
  }

  std::int64_t low_;
  Snapshot snapshot_ = nullptr;
  Relation heap_ = nullptr, index_ = nullptr;
  IndexScanDesc scan_ = nullptr;
  TupleTableSlot* slot_ = nullptr;
  AttrNumber last_key_column_ = 0, data_column_ = 0;
  std::vector<PositionEntry> entries_;
  std::size_t at_ = 0;
};

// Merges the entries of the runs whose keys are from `low` to `high` (both included) into
// one new run of `level`, streaming (memory: a block per run); the runs stay. Returns the
// new run's id (0 when no entry fell in the range, but for a part, kept empty) and its entries.
std::pair<std::int64_t, std::uint64_t> merge_range(const std::vector<RunRef>& runs, int level, std::uint64_t low,
                                                   std::uint64_t high) {
  std::vector<RunReader> readers;
  readers.reserve(runs.size());
  for (const RunRef& r : runs) readers.emplace_back(r, sql_key(low), sql_key(high));
  RunWriter w(level, /*staged=*/false);
  std::vector<PackedEntry> heads;
  for (const RunReader& r : readers) heads.push_back(r.done() ? gamedb::kNoEntry : gamedb::pack(r.head()));
  bool any = false;
  PackedEntry last = 0;
  const PackedEntry low_entry = PackedEntry{low} << 64, high_entry = (PackedEntry{high} << 64) | ~std::uint64_t{0};
  for (gamedb::LoserTree tree(heads); !tree.empty();) {
    const PackedEntry e = tree.top();
    // A block at either end of the range may hold keys outside it.
    if (e >= low_entry && e <= high_entry && (!any || e != last)) {
      w.add(gamedb::unpack(e));
      last = e;
      any = true;
    }
    tree.replace_top(readers[tree.top_source()].next());
  }
  const std::int64_t run = w.id();
  const std::uint64_t entries = w.finish();
  return {entries > 0 || level == kPending ? run : 0, entries};
}

// The runs of these ids, in order of id (where their blocks are).
std::vector<RunRef> run_refs(const std::vector<std::int64_t>& ids) {
  Oid types[1] = {INT8ARRAYOID};
  Datum values[1] = {int8_array(ids)};
  spi_exec("SELECT id, staged FROM pgmate.position_runs WHERE id = ANY ($1) ORDER BY id", 1, types, values);
  std::vector<RunRef> refs;
  for (std::uint64_t i = 0; i < SPI_processed; ++i) {
    const bool staged = pg_call([&] {
      bool is_null;
      return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &is_null));
    });
    refs.push_back({spi_int8(static_cast<int>(i), 1), staged});
  }
  return refs;
}

// Merges the runs into one run of `level` and removes them. Returns the new run's entries.
std::uint64_t merge_into(const std::vector<std::int64_t>& runs, int level) {
  const std::uint64_t entries = merge_range(run_refs(runs), level, 0, UINT64_MAX).second;
  for (std::int64_t r : runs) {
    Oid types[1] = {INT8OID};
    Datum values[1] = {Int64GetDatum(r)};
    delete_runs("id = $1", 1, types, values);
  }
  return entries;
}

// Merges runs while some level has kFanout of them (the smallest level first).
void merge_levels() {
  const std::string levels = "SELECT level FROM pgmate.position_runs WHERE level >= 0 GROUP BY level HAVING count(*) >= " +
                             std::to_string(kFanout) + " ORDER BY level LIMIT 1";
  for (;;) {
    spi_exec(levels.c_str());
    if (SPI_processed == 0) return;
    const std::int64_t level = pg_call([] {
      bool is_null;
      return static_cast<std::int64_t>(DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null)));
    });
    Oid types[1] = {INT4OID};
    Datum values[1] = {Int32GetDatum(static_cast<int>(level))};
    spi_exec("SELECT id FROM pgmate.position_runs WHERE level = $1 ORDER BY id", 1, types, values);
    std::vector<std::int64_t> runs;
    for (std::uint64_t i = 0; i < SPI_processed; ++i) runs.push_back(spi_int8(static_cast<int>(i), 1));
    merge_into(runs, static_cast<int>(level) + 1);
  }
}

std::vector<std::int64_t> all_runs() {
  spi_exec("SELECT id FROM pgmate.position_runs WHERE level >= 0 ORDER BY id");
  std::vector<std::int64_t> runs;
  for (std::uint64_t i = 0; i < SPI_processed; ++i) runs.push_back(spi_int8(static_cast<int>(i), 1));
  return runs;
}

std::uint64_t merge_all() {
  const std::vector<std::int64_t> runs = all_runs();
  if (runs.empty()) return 0;
  if (runs.size() == 1) {
    spi_exec("SELECT entries FROM pgmate.position_runs");
    return static_cast<std::uint64_t>(spi_int8(0, 1));
  }
  spi_exec("SELECT max(level) FROM pgmate.position_runs");
  return merge_into(runs, static_cast<int>(spi_int8(0, 1)) + 1);
}

// ------------------------------------------------------------------ games to entries

// Memory kept from statement to statement while it stays below kKeepBytes: an import's
// batches each need some tens of megabytes, and memory given back and asked for again has
// its pages faulted in anew every time (as costly as the replays remember_game_entries saves).
constexpr std::size_t kKeepBytes = std::size_t{48} << 20;

// A statement's entries and the sort's second buffer (game_entries).
struct StatementBuffers {
  std::vector<PositionEntry> entries, scratch;

  // At the end of a transaction: what grew past kKeepBytes is given back.
  void trim() {
    for (std::vector<PositionEntry>* v : {&entries, &scratch})
      if (v->capacity() * sizeof(PositionEntry) > kKeepBytes) std::vector<PositionEntry>().swap(*v);
  }
};
StatementBuffers statement_buffers;

void clean_up_at_transaction_end();

// What remember_game_entries keeps, in the order the games came: their bytes one after
// another, and their entries. A statement's rows reach its trigger in the order they were
// stored, so the trigger finds each row's game as the next one kept (or a few further on,
// past games summarized for something else), by comparing bytes: no hashing, no lookup.
class RememberedEntries {
 public:
  // 8M entries (128 MB): a statement of about 100,000 games; those past it are replayed.
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 23;
  static constexpr std::size_t kLookAhead = 4;

  void add(std::string_view game_bytes, std::span<const PositionEntry> entries) {
    if (entries_.size() + entries.size() > kMaxEntries) return;
    clean_up_at_transaction_end();
    bytes_.append(game_bytes);
    byte_ends_.push_back(bytes_.size());
    entries_.insert(entries_.end(), entries.begin(), entries.end());
    entry_ends_.push_back(entries_.size());
  }

  bool empty() const { return byte_ends_.size() == next_; }

  // The entries of the game (start: the packed board; moves: the 16-bit values) when it is
  // among the next games kept; those before it are passed over. Empty when it is not.
  std::span<const PositionEntry> take(const char* start, std::span<const std::uint16_t> moves) {
    const std::size_t size = pg::kBoardSize + moves.size_bytes();
    for (std::size_t k = next_; k < byte_ends_.size() && k < next_ + kLookAhead; ++k) {
      const std::size_t from = k == 0 ? 0 : byte_ends_[k - 1];
      if (byte_ends_[k] - from != size || std::memcmp(bytes_.data() + from, start, pg::kBoardSize) != 0 ||
          std::memcmp(bytes_.data() + from + pg::kBoardSize, moves.data(), moves.size_bytes()) != 0)
        continue;
      next_ = k + 1;
      const std::size_t first = k == 0 ? 0 : entry_ends_[k - 1];
      return std::span<const PositionEntry>(entries_).subspan(first, entry_ends_[k] - first);
    }
    return {};
  }

  // Empties it, keeping its memory below kKeepBytes for the next statement.
  void clear() {
    next_ = 0;
    if (entries_.capacity() * sizeof(PositionEntry) + bytes_.capacity() > kKeepBytes) {
      std::string().swap(bytes_);
      std::vector<std::size_t>().swap(byte_ends_);
      std::vector<PositionEntry>().swap(entries_);
      std::vector<std::size_t>().swap(entry_ends_);
      return;
    }
    bytes_.clear();
    byte_ends_.clear();
    entries_.clear();
    entry_ends_.clear();
  }

 private:
  std::string bytes_;
  std::vector<std::size_t> byte_ends_;  // game k's bytes end here
  std::vector<PositionEntry> entries_;
  std::vector<std::size_t> entry_ends_;  // game k's entries end here
  std::size_t next_ = 0;                 // the first game not taken yet
};

RememberedEntries remembered;

void at_transaction_end(XactEvent event, void*) {
  if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
      event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT) {
    remembered.clear();
    statement_buffers.trim();
  }
}

void clean_up_at_transaction_end() {
  static bool registered = false;
  if (registered) return;
  pg_call([] { RegisterXactCallback(at_transaction_end, nullptr); });
  registered = true;
}

// The entries of the games a query returns (columns id, start, moves, result), sorted, in
// a buffer that the next call reuses. A game id beyond the index's 32 bits is an error
// naming it.
// With `facts`, the query is counts::games_with_facts' and each row's facts are added to it.
const std::vector<PositionEntry>& game_entries(const char* query, std::vector<gamedb::GameFacts>* facts = nullptr) {
  clean_up_at_transaction_end();
  std::vector<PositionEntry>& entries = statement_buffers.entries;
  entries.clear();
  spi_exec(query);
  SPITupleTable* table = SPI_tuptable;
  const std::uint64_t n = SPI_processed;
  std::vector<Datum> move_datums;
  entries.reserve(static_cast<std::size_t>(n) * 64);  // about a game's distinct positions
  if (facts) facts->clear();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 256 == 0) pg::check_for_interrupts();
    if (facts) facts->push_back(pg::counts::facts_of_row(table->vals[i], table->tupdesc));
    if (!remembered.empty()) {
      // The entries the row's summary computed, when kept: the game is not replayed again.
      std::int64_t id = 0;
      std::span<const PositionEntry> found;
      gamedb::GameResult result = gamedb::GameResult::kUnknown;
      pg_call([&] {
        bool is_null;
        HeapTuple row = table->vals[i];
        id = DatumGetInt64(SPI_getbinval(row, table->tupdesc, 1, &is_null));
        const Datum start = SPI_getbinval(row, table->tupdesc, 2, &is_null);
        // Moves that are not one plain list (NULL elements, more dimensions) are left to
        // the replay, which says what is wrong.
        const pg::MoveValues moves = pg::move_values(SPI_getbinval(row, table->tupdesc, 3, &is_null));
        if (moves.dimensions > 1 || moves.first_null >= 0) return;
        found = remembered.take(DatumGetPointer(start), moves.present);
        if (found.empty()) return;
        char* r = TextDatumGetCString(SPI_getbinval(row, table->tupdesc, 4, &is_null));
        result = gamedb::parse_result(r);
        pfree(r);
      });
      if (!found.empty() && id >= 0 && static_cast<std::uint64_t>(id) <= gamedb::kMaxGameId) {
        for (const PositionEntry& e : found)
          entries.push_back({e.key, static_cast<std::uint32_t>(id), gamedb::EntryCode::with_result(e.code, result)});
        continue;
      }
    }
    std::int64_t id = 0;
    Datum start_datum = 0;
    std::string result;
    move_datums.clear();
    pg_call([&] {  // PostgreSQL calls only: nothing here throws a C++ exception
      bool is_null;
      HeapTuple row = table->vals[i];
      id = DatumGetInt64(SPI_getbinval(row, table->tupdesc, 1, &is_null));
      start_datum = SPI_getbinval(row, table->tupdesc, 2, &is_null);
      ArrayType* a = DatumGetArrayTypeP(SPI_getbinval(row, table->tupdesc, 3, &is_null));
      Datum* elems;
      bool* nulls;
      int count;
      int16 typlen;
      bool typbyval;
      char typalign;
      get_typlenbyvalalign(ARR_ELEMTYPE(a), &typlen, &typbyval, &typalign);
      deconstruct_array(a, ARR_ELEMTYPE(a), typlen, typbyval, typalign, &elems, &nulls, &count);
      move_datums.assign(elems, elems + count);
      char* r = TextDatumGetCString(SPI_getbinval(row, table->tupdesc, 4, &is_null));
      result = r;
      pfree(r);
    });
    const chess::Board start = pg::board_from_datum(start_datum);
    std::vector<chess::Move> moves;
    moves.reserve(move_datums.size());
    for (Datum d : move_datums) moves.push_back(pg::move_from_datum(d));
    if (id < 0 || static_cast<std::uint64_t>(id) > gamedb::kMaxGameId)
      throw pg::SqlError(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                         "game " + std::to_string(id) + ": the position index holds game ids from 0 to " +
                             std::to_string(gamedb::kMaxGameId));
    gamedb::append_game_entries(static_cast<std::uint64_t>(id), start, moves, gamedb::parse_result(result), entries);
  }
  pg_call([&] { SPI_freetuptable(table); });
  remembered.clear();  // this statement's games are read; the next statement brings its own
  gamedb::sort_entries(entries, statement_buffers.scratch);
  return entries;
}

// ------------------------------------------------------------------ finding a key

// A block holding entries of a key: where it is and its data (copied).
struct FoundBlock {
  bool staged;
  std::int64_t run;
  std::int64_t first_key;
  int seq;
  std::string data;
};

// The blocks that may hold a key, run by run, through the primary key (run_id, first_key,
// seq): the last block that starts below the key, then those that start at it. Small
// queries whose plans cannot depend on statistics: a fresh index has none, and a plan
// that scanned every block would make each search read the whole index.
constexpr const char* kRuns = "SELECT id, staged FROM pgmate.position_runs WHERE level >= 0 ORDER BY id";
std::string floor_block_sql(bool staged) {
  return std::string("SELECT first_key, seq FROM ") + blocks_table(staged) +
         " WHERE run_id = $1 AND first_key < $2 ORDER BY run_id DESC, first_key DESC, seq DESC LIMIT 1";
}
std::string key_blocks_sql(bool staged) {
  return std::string("SELECT run_id, first_key, seq, data FROM ") + blocks_table(staged) +
         " WHERE run_id = $1 AND (first_key, seq) >= ($2, $3) AND first_key <= $4 ORDER BY run_id, first_key, seq";
}

SPIPlanPtr kept_plan(SPIPlanPtr& plan, const char* sql, std::initializer_list<Oid> types) {
  if (!plan) {
    std::vector<Oid> t(types);
    SPIPlanPtr p = SPI_prepare(sql, static_cast<int>(t.size()), t.data());
    if (!p) elog(ERROR, "position index: cannot prepare: %s", sql);
    SPI_keepplan(p);
    plan = p;
  }
  return plan;
}

// Calls f(view, first, last, row, desc, staged) for the entries of `key` in every block
// that has some. Searches read with the statement's snapshot; maintenance (fresh) reads
// the latest. With max_per_run, a run's blocks stop once that many of its entries came: a
// key's entries in a run are in game order, so those are the run's lowest game ids.
template <class F>
void for_each_entry_range(std::uint64_t key, bool fresh, F&& f, std::uint64_t max_per_run = UINT64_MAX) {
  static SPIPlanPtr runs_plan = nullptr, floor_plans[2] = {nullptr, nullptr}, blocks_plans[2] = {nullptr, nullptr};
  const Datum sql_k = Int64GetDatum(sql_key(key));
  std::vector<RunRef> runs;
  pinned_sql([&] {
    const int rc = SPI_execute_plan(kept_plan(runs_plan, kRuns, {}), nullptr, nullptr, !fresh, 0);
    if (rc != SPI_OK_SELECT) elog(ERROR, "position index: SPI error %s", SPI_result_code_string(rc));
    for (std::uint64_t i = 0; i < SPI_processed; ++i) {
      bool is_null;
      runs.push_back({DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &is_null)),
                      DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &is_null))});
    }
  });
  static const std::string floor_sql[2] = {floor_block_sql(false), floor_block_sql(true)};
  static const std::string blocks_sql[2] = {key_blocks_sql(false), key_blocks_sql(true)};
  for (const RunRef& run : runs) {
    pg::check_for_interrupts();
    Datum from_key = sql_k, from_seq = Int32GetDatum(0);
    SPIPlanPtr& floor_plan = floor_plans[run.staged ? 1 : 0];
    SPIPlanPtr& blocks_plan = blocks_plans[run.staged ? 1 : 0];
    pinned_sql([&] {
      Datum values[2] = {Int64GetDatum(run.id), sql_k};
      const int rc = SPI_execute_plan(kept_plan(floor_plan, floor_sql[run.staged ? 1 : 0].c_str(), {INT8OID, INT8OID}),
                                      values, nullptr, !fresh, 1);
      if (rc != SPI_OK_SELECT) elog(ERROR, "position index: SPI error %s", SPI_result_code_string(rc));
      if (SPI_processed == 1) {
        bool is_null;
        from_key = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null);
        from_seq = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &is_null);
      }
      SPI_freetuptable(SPI_tuptable);
    });
    Datum range[4] = {Int64GetDatum(run.id), from_key, from_seq, sql_k};
    SPIPlanPtr plan = pinned_sql([&] {
      return kept_plan(blocks_plan, blocks_sql[run.staged ? 1 : 0].c_str(), {INT8OID, INT8OID, INT4OID, INT8OID});
    });
    std::uint64_t delivered = 0;
    const auto deliver = [&] {
      SPITupleTable* table = SPI_tuptable;
      const std::uint64_t n = SPI_processed;
      for (std::uint64_t i = 0; i < n; ++i) {
        if (i % 64 == 63) pg::check_for_interrupts();
        const auto [data, size] = spi_bytes(table->vals[i], table->tupdesc, 4);
        const BlockView v(data, size);
        const auto [first, last] = v.equal_range(key);
        if (first < last) f(v, first, last, table->vals[i], table->tupdesc, run.staged);
        delivered += last - first;
      }
      pg_call([&] { SPI_freetuptable(table); });
      return n;
    };
    if (max_per_run == UINT64_MAX) {
      pinned_sql([&] {
        const int rc = SPI_execute_plan(plan, range, nullptr, !fresh, 0);
        if (rc != SPI_OK_SELECT) elog(ERROR, "position index: SPI error %s", SPI_result_code_string(rc));
      });
      deliver();
      continue;
    }
    // A few blocks at a time, while the run has given fewer than max_per_run entries.
    Portal cursor = pinned_sql([&] { return SPI_cursor_open(nullptr, plan, range, nullptr, !fresh); });
    while (delivered < max_per_run) {
      pinned_sql([&] { SPI_cursor_fetch(cursor, true, 4); });
      if (deliver() == 0) break;
    }
    pg_call([&] { SPI_cursor_close(cursor); });
  }
}

// Every published entry in key order (each once: a parallel merge's parts never overlap,
// but an entry found twice is passed once).
void scan_index(const std::function<void(const PositionEntry&)>& f) {
  const std::vector<RunRef> runs = run_refs(all_runs());
  std::vector<RunReader> readers;
  readers.reserve(runs.size());
  for (const RunRef& r : runs) readers.emplace_back(r);
  std::vector<PackedEntry> heads;
  for (const RunReader& r : readers) heads.push_back(r.done() ? gamedb::kNoEntry : gamedb::pack(r.head()));
  bool any = false;
  PackedEntry last = 0;
  for (gamedb::LoserTree tree(heads); !tree.empty();) {
    const PackedEntry e = tree.top();
    if (!any || e != last) f(gamedb::unpack(e));
    last = e;
    any = true;
    tree.replace_top(readers[tree.top_source()].next());
  }
}

// ------------------------------------------------------------------ deletions

// Takes the entries of the games of `query` (id, start, moves, result: as they were
// indexed) out of the blocks that hold them.
void remove_games(const char* query) {
  const std::vector<PositionEntry>& gone = game_entries(query);
  if (gone.empty()) return;
  std::vector<std::uint32_t> games;
  for (const auto& e : gone) games.push_back(e.game);
  std::sort(games.begin(), games.end());
  games.erase(std::unique(games.begin(), games.end()), games.end());

  // The blocks to rewrite, each once.
  std::vector<FoundBlock> blocks;
  std::uint64_t previous_key = 0;
  bool first = true;
  for (const auto& e : gone) {
    if (!first && e.key == previous_key) continue;
    first = false;
    previous_key = e.key;
    for_each_entry_range(e.key, true, [&](const BlockView&, std::size_t, std::size_t, HeapTuple row, TupleDesc desc,
                                          bool staged) {
      FoundBlock b;
      b.staged = staged;
      pg_call([&] {
        bool is_null;
        b.run = DatumGetInt64(SPI_getbinval(row, desc, 1, &is_null));
        b.first_key = DatumGetInt64(SPI_getbinval(row, desc, 2, &is_null));
        b.seq = DatumGetInt32(SPI_getbinval(row, desc, 3, &is_null));
      });
      const auto [data, size] = spi_bytes(row, desc, 4);
      b.data.assign(static_cast<const char*>(data), size);
      blocks.push_back(std::move(b));
    });
  }
  std::sort(blocks.begin(), blocks.end(), [](const FoundBlock& a, const FoundBlock& b) {
    return std::tie(a.run, a.first_key, a.seq) < std::tie(b.run, b.first_key, b.seq);
  });
  blocks.erase(std::unique(blocks.begin(), blocks.end(),
                           [](const FoundBlock& a, const FoundBlock& b) {
                             return a.run == b.run && a.first_key == b.first_key && a.seq == b.seq;
                           }),
               blocks.end());

  for (const FoundBlock& b : blocks) {
    pg::check_for_interrupts();
    const BlockView v(b.data.data(), b.data.size());
    std::vector<PositionEntry> kept;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::binary_search(games.begin(), games.end(), v.game(i))) kept.push_back(v.entry(i));
    const std::int64_t removed = static_cast<std::int64_t>(v.size() - kept.size());
    if (removed == 0) continue;
    Oid key_types[3] = {INT8OID, INT8OID, INT4OID};
    Datum key_values[3] = {Int64GetDatum(b.run), Int64GetDatum(b.first_key), Int32GetDatum(b.seq)};
    if (kept.empty()) {
      spi_exec((std::string("DELETE FROM ") + blocks_table(b.staged) +
                " WHERE run_id = $1 AND first_key = $2 AND seq = $3").c_str(),
               3, key_types, key_values);
    } else {
      const std::string data = gamedb::encode_block(kept);
      pinned_sql([&] {
        bytea* bytes = static_cast<bytea*>(palloc(VARHDRSZ + data.size()));
        SET_VARSIZE(bytes, VARHDRSZ + data.size());
        std::memcpy(VARDATA(bytes), data.data(), data.size());
        Oid types[6] = {INT8OID, INT8OID, INT4OID, INT8OID, INT8OID, BYTEAOID};
        Datum values[6] = {key_values[0], key_values[1], key_values[2], Int64GetDatum(sql_key(kept.front().key)),
                           Int64GetDatum(sql_key(kept.back().key)), PointerGetDatum(bytes)};
        const std::string sql = std::string("UPDATE ") + blocks_table(b.staged) +
                                " SET first_key = $4, last_key = $5, data = $6 "
                                "WHERE run_id = $1 AND first_key = $2 AND seq = $3";
        const int rc = SPI_execute_with_args(sql.c_str(), 6, types, values, nullptr, false, 0);
        if (rc < 0) elog(ERROR, "position index: SPI error %s rewriting a block", SPI_result_code_string(rc));
      });
    }
    Oid types[3] = {INT8OID, INT8OID, INT4OID};
    Datum values[3] = {Int64GetDatum(b.run), Int64GetDatum(removed), Int32GetDatum(kept.empty() ? 1 : 0)};
    spi_exec("UPDATE pgmate.position_runs SET entries = entries - $2, blocks = blocks - $3 WHERE id = $1", 3, types,
             values);
  }
  delete_runs("entries = 0");
}

std::uint64_t rebuild() {
  lock_index(true);
  spi_exec("TRUNCATE pgmate.position_blocks, pgmate.position_staged_blocks, pgmate.position_runs");
  // Runs of kRebuildChunk games by id, then one merge.
  std::int64_t after = -1;
  for (;;) {
    const std::string query =
        "SELECT id, start, moves, result FROM pgmate.games WHERE id > " + std::to_string(after) + " ORDER BY id LIMIT " +
        std::to_string(kRebuildChunk);
    const std::vector<PositionEntry>& entries = game_entries(query.c_str());
    if (entries.empty()) break;
    // Every game has at least its start position's entry: the chunk's last game is the
    // largest game among its entries.
    after = std::max_element(entries.begin(), entries.end(), [](const PositionEntry& a, const PositionEntry& b) {
              return a.game < b.game;
            })->game;
    write_run(0, entries);
  }
  return merge_all();
}

std::int64_t count_rows(const char* query) {
  spi_exec(query);
  return spi_int8(0, 1);
}

constexpr const char* kNewGames = "SELECT id, start, moves, result FROM new_games";
constexpr const char* kOldGames = "SELECT id, start, moves, result FROM old_games";
// Rows an UPDATE changed in what the index holds: the old ones out, the new ones in.
constexpr const char* kChangedOld =
    "SELECT o.id, o.start, o.moves, o.result FROM old_games o WHERE NOT EXISTS (SELECT 1 FROM new_games n "
    "WHERE n.id = o.id AND n.start::text = o.start::text AND n.moves::text = o.moves::text AND n.result = o.result)";
constexpr const char* kChangedNew =
    "SELECT n.id, n.start, n.moves, n.result FROM new_games n WHERE NOT EXISTS (SELECT 1 FROM old_games o "
    "WHERE n.id = o.id AND n.start::text = o.start::text AND n.moves::text = o.moves::text AND n.result = o.result)";

// Whether rows o and n are the same game to the counts: what the index holds, and the
// speed, ratings and date that the counts know of it (an UPDATE of anything else changes
// no count).
std::string same_facts(const std::string& o, const std::string& n) {
  std::string sql = o + ".id = " + n + ".id";
  for (const char* column : {"start::text", "moves::text", "result"})
    sql += std::string(" AND ") + o + "." + column + " = " + n + "." + column;
  for (const char* column : {"speed", "date", "tags -> 'WhiteElo'", "tags -> 'BlackElo'"})
    sql += std::string(" AND ") + o + "." + column + " IS NOT DISTINCT FROM " + n + "." + column;
  return sql;
}

// Adds (sign 1) or takes away (-1) the games of `from` (a transition table, aliased g; rows
// left out by `where`) at the counted positions, when counts are kept.
void update_counts(const char* from, const std::string& where, int sign) {
  lock_index(false);
  if (!pg::counts::maintained()) return;
  std::vector<gamedb::GameFacts> facts;
  const std::string query = pg::counts::games_with_facts(from) + where;
  const std::vector<PositionEntry>& entries = game_entries(query.c_str(), &facts);
  pg::counts::apply(entries, facts, sign);
}

// Returns whether the index was built again, from the games as they are now (an update's
// new rows included).
bool after_removal(const char* removed_query) {
  const std::int64_t removed = count_rows(("SELECT count(*) FROM (" + std::string(removed_query) + ") g").c_str());
  if (removed == 0) return false;
  lock_index(true);
  const std::int64_t indexed = count_rows("SELECT count(*) FROM pgmate.games");
  if (static_cast<std::uint64_t>(removed) > kRewriteLimit || removed > indexed / 10) {
    rebuild();
    return true;
  }
  remove_games(removed_query);
  return false;
}

// The staged runs: (xmin, retired) of each.
struct StagedRuns {
  std::int64_t live = 0, retired = 0;
  TransactionId retired_by = InvalidTransactionId;  // the latest transaction that retired one
};
StagedRuns staged_runs() {
  Oid types[1] = {INT4OID};
  Datum values[1] = {Int32GetDatum(kRetired)};
  spi_exec("SELECT xmin, level = $1 FROM pgmate.position_runs WHERE staged", 1, types, values);
  StagedRuns runs;
  pg_call([&] {
    for (std::uint64_t i = 0; i < SPI_processed; ++i) {
      bool is_null;
      const TransactionId xmin = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &is_null));
      if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &is_null))) {
        ++runs.live;
      } else {
        ++runs.retired;
        if (!TransactionIdIsValid(runs.retired_by) || TransactionIdFollows(xmin, runs.retired_by)) runs.retired_by = xmin;
      }
    }
  });
  return runs;
}

// When every staged run is retired (a bulk import's final merge is published), empties
// position_staged_blocks with one TRUNCATE and drops those runs; returns how many. Returns
// 0 when it may not, and the caller deletes them block by block like any retired run.
// TRUNCATE is not MVCC-safe: a statement whose snapshot predates the publication would
// still take the staged runs for live and find their blocks gone. So it is done only when
// no snapshot from before the publication is left, under a lock taken only if it is free
// at once (a search reading the table or an import writing it holds it), with the runs
// looked at again once it is held (another import may have committed meanwhile).
constexpr int kTruncateWaitMs = 2000, kTruncatePollMs = 50;

std::int64_t truncate_retired_staged_runs() {
  if (IsolationUsesXactSnapshot()) return 0;  // its snapshot would not see what committed meanwhile
  const StagedRuns before = staged_runs();
  if (before.live > 0 || before.retired == 0) return 0;
  const Oid table = blocks_relation(/*staged=*/true, NoLock);
  if (!pg_call([&] { return pg_class_aclcheck(table, GetUserId(), ACL_TRUNCATE) == ACLCHECK_OK; })) return 0;
  // Snapshots from before the publication, autovacuum's workers left out: an ANALYZE of the
  // games, which an import sets off and which holds a snapshot for seconds, never reads the
  // staged table (and a vacuum of it holds a lock, so that the one below is not free).
  const auto older_snapshots = [&] {
    return pg_call([&] {
      int older = 0;
      VirtualTransactionId* v = GetCurrentVirtualXIDs(before.retired_by, /*excludeXmin0=*/true, /*allDbs=*/false,
                                                      PROC_IN_VACUUM | PROC_IS_AUTOVACUUM, &older);
      pfree(v);
      return older;
    });
  };
  // Such a snapshot is mostly gone within moments (a short query; a snapshot whose xmin an
  // ANALYZE's transaction held back): looked for again for up to kTruncateWaitMs, far less
  // than deleting a bulk import's staged blocks one by one.
  for (int waited_ms = 0; older_snapshots() > 0; waited_ms += kTruncatePollMs) {
    if (waited_ms >= kTruncateWaitMs) return 0;
    pg_call([] { pg_usleep(kTruncatePollMs * 1000L); });
    pg::check_for_interrupts();
  }
  if (!pg_call([&] { return ConditionalLockRelationOid(table, AccessExclusiveLock); })) return 0;
  // What committed before the lock was taken: new staged runs, or runs retired by a later
  // publication (whose older snapshots were not looked for).
  const StagedRuns after = staged_runs();
  if (after.live > 0 || after.retired_by != before.retired_by) {
    pg_call([&] { UnlockRelationOid(table, AccessExclusiveLock); });  // nothing was changed under it
    return 0;
  }
  spi_exec((std::string("TRUNCATE ") + blocks_table(/*staged=*/true)).c_str());
  Oid types[1] = {INT4OID};
  Datum values[1] = {Int32GetDatum(kRetired)};
  spi_exec("DELETE FROM pgmate.position_runs WHERE staged AND level = $1", 1, types, values);
  return static_cast<std::int64_t>(SPI_processed);
}

}  // namespace
}  // namespace pgmate

using namespace pgmate;

PGMATE_FUNCTION(position_index_trigger) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw pg::SqlError(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, "not called as a trigger");
  TriggerData* td = reinterpret_cast<TriggerData*>(fcinfo->context);
  const TriggerEvent event = td->tg_event;
  // It runs as the extension's owner and indexes whatever rows it is given: only the
  // statement triggers on pgmate.games may call it.
  if (!TRIGGER_FIRED_AFTER(event) || !TRIGGER_FIRED_FOR_STATEMENT(event) ||
      RelationGetRelid(td->tg_relation) != pgmate_relation("games"))
    throw pg::SqlError(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED,
                       "position_index_trigger: only the statement triggers on pgmate.games may call it");
  pg_call([&] {
    SPI_connect();
    SPI_register_trigger_data(td);
  });
  if (TRIGGER_FIRED_BY_TRUNCATE(event)) {
    lock_index(true);
    spi_exec("TRUNCATE pgmate.position_blocks, pgmate.position_staged_blocks, pgmate.position_runs");
    pg::counts::clear();
  } else if (TRIGGER_FIRED_BY_INSERT(event)) {
    lock_index(false);
    // A bulk import leaves the counts stale for its end to refresh; other inserts count
    // their games at once, from the entries of the run they write.
    const bool deferred = pg::position_index_deferred_merges;
    const bool counting = !deferred && pg::counts::maintained();
    std::vector<gamedb::GameFacts> facts;
    static const std::string new_with_facts = pg::counts::games_with_facts("new_games");
    const std::vector<PositionEntry>& entries =
        counting ? game_entries(new_with_facts.c_str(), &facts) : game_entries(kNewGames);
    write_run(0, entries, /*staged=*/deferred);
    if (deferred) pg::counts::mark_stale();
    if (counting) pg::counts::apply(entries, facts, 1);
    if (!deferred && !IsolationUsesXactSnapshot() && try_lock_index()) merge_levels();
  } else if (TRIGGER_FIRED_BY_DELETE(event)) {
    after_removal(kOldGames);
    update_counts("old_games", "", -1);
  } else if (TRIGGER_FIRED_BY_UPDATE(event)) {
    if (!after_removal(kChangedOld)) write_run(0, game_entries(kChangedNew));
    update_counts("old_games", " WHERE NOT EXISTS (SELECT 1 FROM new_games n WHERE " + same_facts("g", "n") + ")", -1);
    update_counts("new_games", " WHERE NOT EXISTS (SELECT 1 FROM old_games o WHERE " + same_facts("o", "g") + ")", 1);
  }
  pg_call([] { SPI_finish(); });
  return PointerGetDatum(nullptr);
}

PGMATE_FUNCTION(position_index_merge) {
  const bool all_runs = PG_GETARG_BOOL(0);
  pg_call([] { SPI_connect(); });
  lock_index(true);
  std::uint64_t entries = 0;
  if (all_runs) {
    entries = merge_all();
  } else {
    merge_levels();
    spi_exec("SELECT coalesce(sum(entries), 0)::bigint FROM pgmate.position_runs WHERE level >= 0");
    entries = static_cast<std::uint64_t>(spi_int8(0, 1));
  }
  pg_call([] { SPI_finish(); });
  return Int64GetDatum(static_cast<std::int64_t>(entries));
}

// The runs of an int8[] argument, each checked to be a run of the index (not a part).
std::vector<std::int64_t> run_list(FunctionCallInfo fcinfo, int n) {
  std::vector<std::int64_t> runs;
  for (Datum d : pg::array_elements(fcinfo, n, "runs")) runs.push_back(DatumGetInt64(d));
  std::sort(runs.begin(), runs.end());
  if (std::adjacent_find(runs.begin(), runs.end()) != runs.end())
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "runs: a run is given twice");
  return runs;
}

std::int64_t count_runs(const std::vector<std::int64_t>& runs, const std::string& condition) {
  Oid types[1] = {INT8ARRAYOID};
  Datum values[1] = {int8_array(runs)};
  spi_exec(("SELECT count(*) FROM pgmate.position_runs WHERE id = ANY ($1) AND " + condition).c_str(), 1,
           types, values);
  return spi_int8(0, 1);
}

// position_index_merge_part(runs bigint[], part int, parts int) -> bigint: one of `parts`
// connections merging `runs` at once, each the keys of its share of the key space, into a
// part that stays invisible until position_index_merge_publish; its run id (NULL when no
// entry fell in its share).
PGMATE_FUNCTION(position_index_merge_part) {
  const int part = PG_GETARG_INT32(1), parts = PG_GETARG_INT32(2);
  if (parts < 1 || part < 0 || part >= parts)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "part must be from 0 to parts - 1 (parts >= 1), not " +
                                                            std::to_string(part) + " of " + std::to_string(parts));
  const std::vector<std::int64_t> runs = run_list(fcinfo, 0);
  pg_call([] { SPI_connect(); });
  lock_index(false);  // beside inserts; whoever changes runs drops the part
  if (count_runs(runs, "level >= 0") != static_cast<std::int64_t>(runs.size()))
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "runs: not every one is a run of the position index");
  const std::uint64_t share = UINT64_MAX / static_cast<std::uint64_t>(parts);
  const std::uint64_t low = share * static_cast<std::uint64_t>(part);
  const std::uint64_t high = part == parts - 1 ? UINT64_MAX : low + share - 1;
  const auto [run, entries] = merge_range(run_refs(runs), kPending, low, high);
  // What the part is a share of: publication takes only a whole set of them.
  Oid types[4] = {INT8OID, INT8ARRAYOID, INT4OID, INT4OID};
  Datum values[4] = {Int64GetDatum(run), int8_array(runs), Int32GetDatum(part), Int32GetDatum(parts)};
  spi_exec("UPDATE pgmate.position_runs SET merged_from = $2, part = $3, parts = $4 WHERE id = $1", 4, types, values);
  pg_call([] { SPI_finish(); });
  if (entries == 0) PG_RETURN_NULL();
  return Int64GetDatum(run);
}

// position_index_merge_publish(runs bigint[], parts bigint[], level int) -> bigint: in one
// step, the runs give way to the parts merged from them (now at `level`); 40001 when a
// change to the index since dropped a part (nothing changes then). Returns the parts'
// entries. The parts must be those of one merge of exactly these runs, every share of the
// keys there (the empty ones left out): anything else would lose entries or count them twice.
PGMATE_FUNCTION(position_index_merge_publish) {
  const std::vector<std::int64_t> runs = run_list(fcinfo, 0), parts = run_list(fcinfo, 1);
  const int level = PG_GETARG_INT32(2);
  if (level < 0) throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "level must be 0 or more");
  if (parts.empty()) throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "parts: none given");
  pg_call([] { SPI_connect(); });
  lock_index(true, /*keep_pending=*/true);
  if (count_runs(runs, "level >= 0") != static_cast<std::int64_t>(runs.size()) ||
      count_runs(parts, "level = " + std::to_string(kPending)) != static_cast<std::int64_t>(parts.size()))
    throw pg::SqlError(ERRCODE_T_R_SERIALIZATION_FAILURE,
                       "position index: the runs changed while they were merged; nothing was published "
                       "(pgmate.position_index_merge() merges them)");
  {
    // Shares of one split of these runs, each once, none missing but empty ones; and a
    // level no more than one above the runs' (whose levels schedule later merges).
    const std::string pending = std::to_string(kPending);
    Oid types[3] = {INT8ARRAYOID, INT8ARRAYOID, INT4OID};
    Datum values[3] = {int8_array(runs), int8_array(parts), Int32GetDatum(level)};
    spi_exec(("WITH given AS (SELECT merged_from, part, parts FROM pgmate.position_runs WHERE id = ANY ($2)), "
              "split AS (SELECT max(parts) AS parts FROM given) "
              "SELECT (SELECT count(*) FROM given WHERE merged_from = $1) = cardinality($2) "
              "   AND (SELECT count(DISTINCT parts) FROM given) = 1 "
              "   AND (SELECT count(DISTINCT part) FROM given) = cardinality($2) "
              "   AND NOT EXISTS (SELECT FROM split, generate_series(0, split.parts - 1) s "
              "                   WHERE NOT EXISTS (SELECT FROM pgmate.position_runs r "
              "                                     WHERE r.level = " + pending + " AND r.merged_from = $1 "
              "                                       AND r.part = s AND r.parts = split.parts "
              "                                       AND (r.id = ANY ($2) OR r.entries = 0))) "
              "   AND $3 <= (SELECT max(level) + 1 FROM pgmate.position_runs WHERE id = ANY ($1))").c_str(),
             3, types, values);
    const bool whole = pg_call([] {
      bool is_null;
      const Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null);
      return !is_null && DatumGetBool(d);
    });
    if (!whole)
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                         "parts: not the parts of one merge of these runs, every share of it but the empty ones "
                         "(position_index_merge_part's results for part 0 to parts - 1), or a level more than one "
                         "above the runs'");
  }
  Oid types[2] = {INT8ARRAYOID, INT4OID};
  Datum retire[2] = {int8_array(runs), Int32GetDatum(kRetired)};
  spi_exec("UPDATE pgmate.position_runs SET level = $2 WHERE id = ANY ($1)", 2, types, retire);
  Datum values[2] = {int8_array(parts), Int32GetDatum(level)};
  spi_exec("UPDATE pgmate.position_runs SET level = $2 WHERE id = ANY ($1)", 2, types, values);
  spi_exec("SELECT coalesce(sum(entries), 0)::bigint FROM pgmate.position_runs WHERE id = ANY ($1)", 1, types, values);
  const std::int64_t entries = spi_int8(0, 1);
  delete_runs("level = " + std::to_string(kPending));  // parts of other merges: stale now
  pg_call([] { SPI_finish(); });
  return Int64GetDatum(entries);
}

// position_index_clean(part int, parts int) -> bigint: removes share `part` of `parts` of
// the retired runs (by id) with their blocks, beside the other shares' calls; returns the
// runs removed. Part 0 takes the staged runs: all at once when it can (one TRUNCATE), else
// block by block.
PGMATE_FUNCTION(position_index_clean) {
  const int part = PG_GETARG_INT32(0), parts = PG_GETARG_INT32(1);
  if (parts < 1 || part < 0 || part >= parts)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "part must be from 0 to parts - 1 (parts >= 1), not " +
                                                            std::to_string(part) + " of " + std::to_string(parts));
  pg_call([] { SPI_connect(); });
  lock_index(false);  // beside inserts and the other shares
  std::int64_t removed = part == 0 ? truncate_retired_staged_runs() : 0;
  const std::string share = "level = " + std::to_string(kRetired) + " AND " +
                            (part == 0 ? "(staged OR id % " : "(NOT staged AND id % ") + std::to_string(parts) +
                            " = " + std::to_string(part) + ")";
  removed += delete_runs(share);
  pg_call([] { SPI_finish(); });
  return Int64GetDatum(removed);
}

PGMATE_FUNCTION(position_index_rebuild) {
  pg_call([] { SPI_connect(); });
  const std::uint64_t entries = rebuild();
  pg::counts::refresh(std::nullopt);  // the counts are the index's too
  pg_call([] { SPI_finish(); });
  return Int64GetDatum(static_cast<std::int64_t>(entries));
}

// position_counts_refresh(min_games DEFAULT NULL) -> the positions counted
PGMATE_FUNCTION(position_counts_refresh) {
  std::optional<int> min_games;
  if (!PG_ARGISNULL(0)) min_games = PG_GETARG_INT32(0);
  pg_call([] { SPI_connect(); });
  const std::int64_t positions = pg::counts::refresh(min_games);
  pg_call([] { SPI_finish(); });
  return Int64GetDatum(positions);
}

// position_games(position, max_games DEFAULT NULL) -> SETOF bigint, ascending.
PGMATE_FUNCTION(position_games) {
  if (PG_ARGISNULL(0)) {  // no position: no games (the function is not STRICT for max_games' sake)
    pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC); });
    return Datum(0);
  }
  const chess::Board b = pg::board_arg(fcinfo, 0);
  std::int64_t limit = -1;
  if (!PG_ARGISNULL(1)) {
    limit = PG_GETARG_INT64(1);
    if (limit < 0) throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "max_games must be 0 or more, not " + std::to_string(limit));
  }
  std::vector<std::uint32_t> games;
  pg_call([] { SPI_connect(); });
  // With a limit, each run's lowest ids suffice: a popular position's millions are not read.
  for_each_entry_range(
      b.key, false,
      [&](const BlockView& v, std::size_t first, std::size_t last, HeapTuple, TupleDesc, bool) {
        for (std::size_t i = first; i < last; ++i) games.push_back(v.game(i));
      },
      limit >= 0 ? static_cast<std::uint64_t>(limit) : UINT64_MAX);
  pg_call([] { SPI_finish(); });
  std::sort(games.begin(), games.end());
  if (limit >= 0 && games.size() > static_cast<std::uint64_t>(limit)) games.resize(static_cast<std::size_t>(limit));
  pg_call([&] {
    InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (std::uint32_t g : games) {
      Datum values[1] = {Int64GetDatum(static_cast<std::int64_t>(g))};
      bool nulls[1] = {false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

PGMATE_FUNCTION(position_count) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  std::int64_t count = 0;
  pg_call([] { SPI_connect(); });
  // A counted position's games are its counts' (kept with its entries): popular positions,
  // whose entries are many, are not read one by one.
  if (const auto counts = pg::counts::read(b.key)) {
    count = counts->games();
    pg_call([] { SPI_finish(); });
    return Int64GetDatum(count);
  }
  for_each_entry_range(b.key, false, [&](const BlockView&, std::size_t first, std::size_t last, HeapTuple, TupleDesc, bool) {
    count += static_cast<std::int64_t>(last - first);
  });
  pg_call([] { SPI_finish(); });
  return Int64GetDatum(count);
}

// position_moves(position) -> (game, move, result): every game that reached the position,
// the move played from it there (NULL where the game ended) and the game's result; what
// the explorer with filters joins to pgmate.games.
PGMATE_FUNCTION(position_moves) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  std::vector<std::pair<std::uint32_t, std::uint16_t>> entries;
  pg_call([] { SPI_connect(); });
  for_each_entry_range(b.key, false, [&](const BlockView& v, std::size_t first, std::size_t last, HeapTuple, TupleDesc, bool) {
    for (std::size_t i = first; i < last; ++i) entries.emplace_back(v.game(i), v.code(i));
  });
  pg_call([] { SPI_finish(); });
  std::sort(entries.begin(), entries.end());
  // A few distinct moves among many games: each resolved once.
  std::vector<std::pair<std::uint16_t, chess::Move>> resolved;
  auto move_of = [&](std::uint16_t bits) {
    for (const auto& [k, m] : resolved)
      if (k == bits) return m;
    resolved.emplace_back(bits, gamedb::EntryCode::move(b, bits));
    return resolved.back().second;
  };
  struct Row {
    std::int64_t game;
    chess::Move move;  // null where the game ended
    std::string_view result;
  };
  std::vector<Row> rows;
  rows.reserve(entries.size());
  for (const auto& [game, code] : entries) {
    const bool ended = gamedb::EntryCode::ends_here(code);
    rows.push_back({game, ended ? chess::Move() : move_of(gamedb::EntryCode::move_bits(code)),
                    gamedb::result_text(gamedb::EntryCode::result(code))});
  }
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (const Row& r : rows) {
      Datum values[3] = {Int64GetDatum(r.game), r.move.is_null() ? Datum(0) : pg::move_to_datum(r.move),
                         PointerGetDatum(cstring_to_text_with_len(r.result.data(), static_cast<int>(r.result.size())))};
      bool nulls[3] = {false, r.move.is_null(), false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

void pg::lock_position_index(bool exclusive) { lock_index(exclusive); }

void pg::for_each_key_entry(std::uint64_t key,
                            const std::function<void(const gamedb::BlockView&, std::size_t, std::size_t)>& f) {
  for_each_entry_range(key, false, [&](const BlockView& v, std::size_t first, std::size_t last, HeapTuple, TupleDesc,
                                       bool) { f(v, first, last); });
}

void pg::for_each_index_entry(const std::function<void(const gamedb::PositionEntry&)>& f) { scan_index(f); }

void pg::remember_game_entries(std::string_view game_bytes, std::span<const gamedb::PositionEntry> entries) {
  remembered.add(game_bytes, entries);
}
