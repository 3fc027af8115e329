-- One phase of a run manifest, in seconds from t0.
-- params: source_id, name, start_s, end_s
insert into phases values ($source_id, $name, $start_s, $end_s)
