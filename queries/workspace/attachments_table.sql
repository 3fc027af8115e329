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
