-- The files attachment sid held when it was attached, by path.
-- params: sid
select path, size, mtime_ns, sha256 from attached_files where source_id = $sid order by path
