-- The next free source id (one writer per workspace file, so max + 1 is safe), and whether the
-- workspace has the tables of an attachment (attached_files, attachments; as
-- workspace/table_exists.sql finds a table), which the ingest's checks read only when they exist:
-- asked here, once per ingest, rather than by a statement of their own (about 0.8 ms of CPU
-- each).
-- params:
select
    coalesce(max(source_id), 0) + 1 as source_id,
    exists (
        select 1 from duckdb_tables()
        where schema_name = 'main' and table_name = 'attached_files'
    ) as attached_files,
    exists (
        select 1 from duckdb_tables()
        where schema_name = 'main' and table_name = 'attachments'
    ) as attachments
from sources
