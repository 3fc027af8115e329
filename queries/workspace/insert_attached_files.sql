-- The files of one attachment (workspace/attachments_table.sql), as parallel lists.
-- params: source_id, paths, sizes, mtimes, hashes
insert into attached_files
select $source_id, unnest($paths::varchar[]), unnest($sizes::bigint[]),
       unnest($mtimes::bigint[]), unnest($hashes::varchar[])
