-- attached_files' status-change time (ns) of each file when attached: a file rewritten
-- with its size and modification time put back still has a new ctime, which no user can
-- set (relplan.workspace.attached.check_unchanged then compares its content hash). Added by
-- the attach that first needs it; rows attached before have NULL (checked by size and
-- modification time, as then).
-- params:
alter table attached_files add column if not exists ctime_ns bigint
