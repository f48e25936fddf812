/* SPDX-License-Identifier: MIT */
/*
 * The spulse tables in ClickHouse (docs/FLEET.md): created by
 * spulse push, read by report / flame --clickhouse.
 */
#ifndef SPULSE_CH_SCHEMA_H
#define SPULSE_CH_SCHEMA_H

#include "ch_http.h"

/* CREATE DATABASE / TABLE IF NOT EXISTS for every table: 0 or -EIO. */
int ch_schema_create(struct ch_conn *c);

/*
 * SQL condition selecting committed pushes only (a push is visible once
 * its spulse_pushes row exists; a killed push is not until resumed).
 */
#define CH_COMMITTED "push_key IN (SELECT push_key FROM spulse_pushes)"

#endif /* SPULSE_CH_SCHEMA_H */
