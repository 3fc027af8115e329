-- The stored events and engine_stats tables by their full names (catalog.main.table), for the
-- temp views of a version-1 or -2 workspace opened read-only (workspace/temp_views_since_v2.sql),
-- which shadow those names.
-- params: events, engine_stats
set variable rp_stored_v2 = {'events': $events::varchar, 'engine_stats': $engine_stats::varchar}
