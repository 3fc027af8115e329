-- Record one attachment (workspace/attachments_table.sql).
-- params: source_id, pattern, kind, partitions
insert into attachments values ($source_id, $pattern, $kind, $partitions)
