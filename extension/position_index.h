// The position index's setting (defined in position_index.cpp, registered in _PG_init).
#pragma once

namespace pgmate::pg {

// pgmate.position_index_deferred_merges: inserts leave their runs unmerged (a bulk import
// merges once at its end with pgmate.position_index_merge()).
extern bool position_index_deferred_merges;

}  // namespace pgmate::pg
