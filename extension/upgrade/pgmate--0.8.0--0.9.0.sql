-- pgmate 0.8.0 -> 0.9.0: security and reliability. Learning runs belong to the role that
-- made them and are resumed only by it; stored settings are validated again on every call;
-- engines cannot pin a backend; bounded work everywhere; locks that need a privilege.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.9.0'" to load this file. \quit
