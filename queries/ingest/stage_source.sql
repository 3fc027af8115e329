-- Remember a staged source's path as the user gave it (for messages that name another file).
-- params: source_id, path
insert into stage_sources values ($source_id, $path, null)
