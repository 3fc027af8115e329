-- Tables added after schema version 1, as empty temp tables, so that a version-1 workspace
-- opened read-only (and so not migrated) reads them as empty. Columns as in queries/schema.sql.
-- params:
create temp table if not exists kube_events (
    t_first double not null,
    t_last double not null,
    count bigint not null,
    reason varchar not null,
    type varchar,
    message varchar,
    object_kind varchar,
    namespace varchar,
    object_name varchar,
    container varchar,
    node varchar,
    component varchar,
    source_id integer not null,
    source_row bigint not null
)
