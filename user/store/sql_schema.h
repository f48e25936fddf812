/* SPDX-License-Identifier: MIT */
/* SQL text of the `spulse sql` schema (sql_schema.c, docs/FLEET.md). */
#ifndef SPULSE_SQL_SCHEMA_H
#define SPULSE_SQL_SCHEMA_H

/* CREATE TABLE / CREATE INDEX statements of a new database. */
extern const char sql_schema_tables[];
/* CREATE VIEW statements (query views over the tables). */
extern const char sql_schema_views[];

#endif /* SPULSE_SQL_SCHEMA_H */
