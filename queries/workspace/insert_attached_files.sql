-- The files of one attachment (workspace/attachments_table.sql), as parallel lists.
-- params: source_id, paths, sizes, mtimes, ctimes, hashes
insert into attached_files (source_id, path, size, mtime_ns, ctime_ns, sha256)
select $source_id, unnest($paths::varchar[]), unnest($sizes::bigint[]),
       unnest($mtimes::bigint[]), unnest($ctimes::bigint[]), unnest($hashes::varchar[])
