#include "learning_jsonb.h"

#include "procedure.h"

extern "C" {
#include "executor/spi.h"
}

namespace pgmate::pg {

namespace {

std::string jsonb_text(JsonbContainer* container, int length) { return JsonbToCString(nullptr, container, length); }

learning::JsonType type_of(const JsonbValue& v) {
  switch (v.type) {
    case jbvString: return learning::JsonType::String;
    case jbvNumeric: return learning::JsonType::Number;
    case jbvBool: return learning::JsonType::Boolean;
    case jbvBinary:
      return JsonContainerIsObject(v.val.binary.data) ? learning::JsonType::Object : learning::JsonType::Array;
    default: return learning::JsonType::Null;
  }
}

}  // namespace

JsonbInput read_jsonb(Datum datum) {
  JsonbInput in;
  pg_call([&] {
    Jsonb* j = DatumGetJsonbP(datum);
    in.json = jsonb_text(&j->root, VARSIZE(j));
    if (!JB_ROOT_IS_OBJECT(j)) {
      in.type = JB_ROOT_IS_SCALAR(j) ? learning::JsonType::Number : learning::JsonType::Array;
      return;
    }
    in.type = learning::JsonType::Object;
    JsonbIterator* it = JsonbIteratorInit(&j->root);
    JsonbValue v;
    JsonbIteratorToken token;
    std::string key;
    while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE) {
      if (token == WJB_KEY) {
        key.assign(v.val.string.val, std::size_t(v.val.string.len));
      } else if (token == WJB_VALUE) {
        learning::JsonValue value;
        value.type = type_of(v);
        Jsonb* one = JsonbValueToJsonb(&v);
        value.json = jsonb_text(&one->root, VARSIZE(one));
        value.text = v.type == jbvString ? std::string(v.val.string.val, std::size_t(v.val.string.len)) : value.json;
        in.members[key] = std::move(value);
      }
    }
  });
  return in;
}

JsonbInput read_jsonb_text(const std::string& text) { return read_jsonb(jsonb_of_text(text)); }

Datum jsonb_of_text(const std::string& json) {
  return pg_call([&] { return DirectFunctionCall1(jsonb_in, CStringGetDatum(json.c_str())); });
}

Datum jsonb_of(const learning::JsonObject& object) { return jsonb_of_text(learning::object_json(object)); }

void raise_error(int sqlstate, const std::string& message, const std::string& hint) {
  pg_call([&] {
    ereport(ERROR, (errcode(sqlstate), errmsg("%s", message.c_str()), hint.empty() ? 0 : errhint("%s", hint.c_str())));
  });
  throw std::logic_error("unreachable");
}

void raise(const learning::OptionError& e) { raise_error(ERRCODE_INVALID_PARAMETER_VALUE, e.what(), e.hint()); }

learning::SettingsContext database_context() {
  learning::SettingsContext context;
  context.have_eco_openings = [] {
    return pinned_sql([] {
      SPI_connect();
      SPI_execute("SELECT EXISTS (SELECT 1 FROM pgmate.openings)", true, 1);
      bool is_null = true;
      const bool found = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null));
      SPI_finish();
      return found;
    });
  };
  context.random_seed = [] { return std::int64_t(fresh_seed() % 2147483647); };
  return context;
}

}  // namespace pgmate::pg
