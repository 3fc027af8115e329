-- The next free source id (one writer per workspace file, so max + 1 is safe).
-- params:
select coalesce(max(source_id), 0) + 1 as source_id from sources
