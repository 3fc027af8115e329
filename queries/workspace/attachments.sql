-- Every attachment of the workspace, oldest first (workspace/attachments_table.sql).
-- params:
select source_id, pattern, kind, partitions from attachments order by source_id
