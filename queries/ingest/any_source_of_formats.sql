-- Whether the workspace holds a source of one of these formats (the whole-second refinement
-- is skipped without one).
-- params: formats
select exists (
    select 1 from sources where format in (select unnest($formats::varchar[]))
) as found
