// Who is asking: the role that logged in, which SET ROLE and SET SESSION AUTHORIZATION
// leave as it was (what runs in the session may always go back to it).
#include "guard.h"

PGMATE_FUNCTION(login_role) { return ObjectIdGetDatum(GetAuthenticatedUserId()); }
