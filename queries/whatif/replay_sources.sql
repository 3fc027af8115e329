-- A replay's three sources (relplan/whatif/replay.py `load_measured`), one row per list
-- element, as ingest/insert_source.sql stores each of the files they stand for: no file, so
-- the path is `(replay)/<kind>` and the hash `replay-<kind>` (unique, not a SHA-256); nothing
-- rejected, no unknown column, no note.
-- params: source_ids, kinds, formats, rows, t_mins, t_maxs, ingested_at
insert into sources (
    source_id, path, kind, format, sha256, rows, rejected, t_min, t_max, unknown_columns,
    ingested_at, notes
)
select source_id, '(replay)/' || kind, kind, format, 'replay-' || kind, rows, 0, t_min, t_max,
       []::varchar[], $ingested_at, []::varchar[]
from (
    select unnest($source_ids::integer[]) as source_id, unnest($kinds::varchar[]) as kind,
           unnest($formats::varchar[]) as format, unnest($rows::bigint[]) as rows,
           unnest($t_mins::double[]) as t_min, unnest($t_maxs::double[]) as t_max
)
