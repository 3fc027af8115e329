-- Loads one phase of a simulator run.json into the workspace's phases table (seconds from t0).
-- params: source_id, name, start_s, end_s
insert into phases values ($source_id, $name, $start_s, $end_s)
