-- Add a note to a source stored by this ingest (a fact known only once every file is in).
-- params: source_id, note
update sources set notes = list_append(coalesce(notes, []::varchar[]), $note)
where source_id = $source_id
