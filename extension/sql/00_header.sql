-- pgmate: chess move generation in PostgreSQL.
-- This file is built from extension/sql/*.sql, one section per file.

\echo Use "CREATE EXTENSION pgmate" to load this file. \quit
