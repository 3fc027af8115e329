-- Registers one written simulator file as a source of an in-memory workspace, so that the
-- simulator's summary (relplan/sim/summary.py) can run `relplan analyze` on its own output.
-- ingested_at is the run's t0, so nothing in the workspace depends on the clock.
-- params: source_id, path, kind, format, sha256, t0
insert into sources (source_id, path, kind, format, sha256, rows, rejected, ingested_at)
values ($source_id, $path, $kind, $format, $sha256, 0, 0, to_timestamp($t0))
