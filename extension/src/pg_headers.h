// PostgreSQL's headers for the extension's C++ files. Include this after every C++
// standard header: PostgreSQL's port.h redefines printf and friends as macros.
// Pure C++ code (core/) never includes this.
#pragma once

extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"
}
