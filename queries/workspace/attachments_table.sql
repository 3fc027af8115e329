-- Attached inputs (`relplan ingest --attach`): Parquet read in place through views, not
-- copied. One row per attachment; its sources row (same source_id) holds the path (the
-- glob, absolute), the content hash of the file list, the row count and the time span.
-- partitions: the Hive partition keys of its paths (day, hour, replica, ...).
-- Created by the first attach (additive: older workspaces simply have none).
-- params:
create table if not exists attachments (
    source_id integer primary key,
    pattern varchar not null,       -- the glob, absolute
    kind varchar not null,
    partitions varchar[] not null
);
-- The files of each attachment as they were when attached (relplan.workspace.attached checks
-- them on every read: a file added, removed or rewritten since is an error, never a different
-- answer). sha256 is the content hash ingest gives the same file when it copies it, so the
-- same records cannot enter the workspace twice, once copied and once attached.
create table if not exists attached_files (
    source_id integer not null,
    path varchar not null,
    size bigint not null,
    mtime_ns bigint not null,
    sha256 varchar not null
);
