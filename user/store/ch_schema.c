/* SPDX-License-Identifier: MIT */
/* CREATE statements of the spulse ClickHouse schema (ch_schema.h). */
#include <stddef.h>

#include "ch_schema.h"

static const char *const schema[] = {
	/* one row per sample: partitioned by day, ordered for host and
	 * time ranges; batch = the push batch it came in (idempotency);
	 * push_key = the push id's first 64 bits (grouping on a number is
	 * twice as fast as on the 32-character id) */
	"CREATE TABLE IF NOT EXISTS spulse_samples ("
	" day Date, host String, time_ns UInt64, push_key UInt64,"
	" batch UInt32, recording_id String, pid UInt32, tid UInt32,"
	" comm String, cpu UInt32, stack UInt32"
	") ENGINE = MergeTree PARTITION BY toYYYYMMDD(day)"
	" ORDER BY (host, time_ns)",
	/* the stacks samples point at, per push: frames root first and the
	 * report row keys / folded path computed at push time */
	"CREATE TABLE IF NOT EXISTS spulse_stacks ("
	" push_id String, push_key UInt64, stack UInt32, batch UInt32,"
	" depth UInt16,"
	" frames Array(UInt32), keys Array(String), modules Array(String),"
	" leaf String, folded String, labels Array(String),"
	" kinds Array(UInt8)"
	") ENGINE = MergeTree ORDER BY (push_key, stack)",
	/* symbolized frames, per push */
	"CREATE TABLE IF NOT EXISTS spulse_frames ("
	" push_id String, frame UInt32, batch UInt32, kind UInt8,"
	" func String, label String, module String, file String,"
	" line UInt32, addr UInt64, build_id String"
	") ENGINE = MergeTree ORDER BY (push_id, frame)",
	/* the recordings (identities) a push holds */
	"CREATE TABLE IF NOT EXISTS spulse_recordings ("
	" push_id String, source UInt32, batch UInt32, recording_id String,"
	" host String, machine_id String, boot_id String, kernel String,"
	" start_us UInt64, batch_rows UInt32"
	") ENGINE = MergeTree ORDER BY (push_id, source)",
	/* commit log: written last; one row = the push is complete */
	"CREATE TABLE IF NOT EXISTS spulse_pushes ("
	" push_id String, push_key UInt64, file String, samples UInt64,"
	" stacks UInt64,"
	" frames UInt64, batches UInt32, pushed DateTime"
	") ENGINE = MergeTree ORDER BY push_id",
};

int ch_schema_create(struct ch_conn *c)
{
	struct ch_buf q = { 0 };
	size_t i;
	int rc;

	ch_buf_printf(&q, "CREATE DATABASE IF NOT EXISTS %s", c->db);
	rc = q.oom ? -12 : ch_query(c, q.p, NULL, 0, NULL, false);
	ch_buf_free(&q);
	for (i = 0; !rc && i < sizeof(schema) / sizeof(schema[0]); i++)
		rc = ch_query(c, schema[i], NULL, 0, NULL, true);
	return rc;
}
