// The pure parts of the learning loop in SQL: its options (pgmate.learning_options), a run's
// settings checked and completed (pgmate.learning_settings, pgmate.learning_device_defaults),
// the gate, its reason and escalation (pgmate.learning_gate, learning_reason, learning_escalation). Each is a thin
// wrapper of core/learning.
#include <cstdint>
#include <string>
#include <vector>

#include "datum.h"
#include "guard.h"
#include "learning/gate.h"
#include "learning/settings.h"
#include "learning_jsonb.h"
#include "procedure.h"

extern "C" {
#include "executor/spi.h"
}

using namespace pgmate;

using pg::JsonbInput;
using pg::jsonb_of;
using pg::raise;
using pg::read_jsonb;
using pg::database_context;

namespace {

// A jsonb argument's members; a NULL is an empty object (it decides nothing, as in SQL).
learning::JsonObject object_arg(FunctionCallInfo fcinfo, int n) {
  return PG_ARGISNULL(n) ? learning::JsonObject{} : read_jsonb(PG_GETARG_DATUM(n)).members;
}

}  // namespace

// pgmate.learning_settings(given jsonb, stored jsonb DEFAULT NULL) RETURNS jsonb: a new
// run's settings, or (with `stored`) the stored settings checked again and every given
// option equal to the stored one.
PGMATE_FUNCTION(learning_settings) {
  JsonbInput given;
  given.type = learning::JsonType::Object;
  given.json = "{}";
  if (!PG_ARGISNULL(0)) given = read_jsonb(PG_GETARG_DATUM(0));
  try {
    learning::require_object(given.type, given.json);
    const learning::SettingsContext context = database_context();
    if (PG_NARGS() < 2 || PG_ARGISNULL(1)) return jsonb_of(learning::new_run_settings(given.members, context));
    const JsonbInput stored = read_jsonb(PG_GETARG_DATUM(1));
    if (stored.type != learning::JsonType::Object)
      throw learning::OptionError("the learning run's stored settings are not valid: learn options must be a JSON "
                                  "object, not " + stored.json);
    learning::check_call_against_stored(given.members, stored.members, context);
    PG_RETURN_DATUM(PG_GETARG_DATUM(1));
  } catch (const learning::OptionError& e) {
    raise(e);
  }
}

// pgmate.learning_device_defaults(settings jsonb, given jsonb, device text) RETURNS jsonb
PGMATE_FUNCTION(learning_device_defaults) {
  const JsonbInput settings = read_jsonb(PG_GETARG_DATUM(0));
  const JsonbInput given = read_jsonb(PG_GETARG_DATUM(1));
  return jsonb_of(learning::device_defaults(settings.members, given.members, pg::text_arg(fcinfo, 2)));
}

// pgmate.learning_gate(best jsonb, vetoes jsonb[], settings jsonb) RETURNS text; a NULL
// decides nothing, as in SQL.
PGMATE_FUNCTION(learning_gate) {
  const auto object = [&](int n) { return object_arg(fcinfo, n); };
  std::vector<learning::MatchOutcome> vetoes;
  if (!PG_ARGISNULL(1)) {
    Datum* elements = nullptr;
    bool* nulls = nullptr;
    int count = 0;
    pg::pg_call([&] {
      ArrayType* array = PG_GETARG_ARRAYTYPE_P(1);
      deconstruct_array(array, JSONBOID, -1, false, TYPALIGN_INT, &elements, &nulls, &count);
    });
    for (int i = 0; i < count; ++i)
      vetoes.push_back(learning::match_outcome(nulls[i] ? learning::JsonObject{} : read_jsonb(elements[i]).members));
  }
  const std::string decision = learning::gate_decision(learning::match_outcome(object(0)), vetoes, object(2));
  return pg::text_datum(decision);
}

// pgmate.learning_reason(best jsonb, older jsonb, older_network bigint, start jsonb,
// settings jsonb) RETURNS text: a NULL older or start was not played.
PGMATE_FUNCTION(learning_reason) {
  const auto object = [&](int n) { return object_arg(fcinfo, n); };
  const learning::JsonObject best = object(0), older = object(1), start = object(3), settings = object(4);
  const std::string reason =
      learning::arena_reason(best, PG_ARGISNULL(1) ? nullptr : &older, PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2),
                             PG_ARGISNULL(3) ? nullptr : &start, settings);
  return pg::text_datum(reason);
}

// pgmate.learning_escalation(level, pretrain_mix, lr, current_share) -> the four outputs
PGMATE_FUNCTION(learning_escalation) {
  const learning::Escalation e =
      learning::escalation(PG_GETARG_INT32(0), PG_GETARG_FLOAT8(1), PG_GETARG_FLOAT8(2), PG_GETARG_FLOAT8(3));
  return pg::pg_call([&] {
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("a record is returned here")));
    desc = BlessTupleDesc(desc);
    Datum values[4] = {Float8GetDatum(e.exclude_share), Float8GetDatum(e.new_pretrain_mix), Float8GetDatum(e.new_lr),
                       Float8GetDatum(e.new_current_share)};
    bool nulls[4] = {false, false, false, false};
    return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
  });
}

// pgmate.learning_option_list(): the rows of pgmate.learning_options, bounds and defaults as text
PGMATE_FUNCTION(learning_option_list) {
  pg::pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (const auto& spec : learning::option_specs()) {
    pg::pg_call([&] {
      Datum choices = 0;
      if (!spec.choices.empty()) {
        Datum items[8];
        int n = 0;
        for (const char* c : spec.choices) items[n++] = CStringGetTextDatum(c);
        choices = PointerGetDatum(construct_array(items, n, TEXTOID, -1, false, TYPALIGN_INT));
      }
      Datum values[9] = {Int32GetDatum(spec.position),
                         CStringGetTextDatum(spec.name),
                         CStringGetTextDatum(learning::kind_name(spec.kind)),
                         spec.low ? CStringGetTextDatum(spec.low) : 0,
                         spec.high ? CStringGetTextDatum(spec.high) : 0,
                         choices,
                         spec.default_json ? CStringGetTextDatum(spec.default_json) : 0,
                         BoolGetDatum(spec.per_call),
                         CStringGetTextDatum(spec.description)};
      bool nulls[9] = {false, false, false, !spec.low, !spec.high, spec.choices.empty(), !spec.default_json, false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    });
  }
  return Datum(0);
}
