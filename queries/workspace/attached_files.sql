-- The files attachment sid held when it was attached, by path (ctime_ns only in
-- workspaces attached since workspace/attached_files_ctime.sql).
-- params: sid
select * from attached_files where source_id = $sid order by path
