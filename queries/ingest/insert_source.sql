-- One sources row per ingested file or pull (inside the ingest transaction).
-- params: source_id, path, kind, format, sha256, rows, rejected, t_min, t_max, unknown_columns, notes, ingested_at
insert into sources (
    source_id, path, kind, format, sha256, rows, rejected, t_min, t_max, unknown_columns,
    ingested_at, notes
) values (
    $source_id, $path, $kind, $format, $sha256, $rows, $rejected, $t_min, $t_max,
    $unknown_columns::varchar[], $ingested_at, $notes::varchar[]
)
