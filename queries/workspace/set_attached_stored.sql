-- The stored engine tables by their full names (catalog.main.table), so the attached views
-- (workspace/attached_views.sql), which shadow those names, can still read them; and the
-- source id of the workspace's attachment.
-- params: steps, events, engine_stats, sid
set variable rp_stored = {'steps': $steps::varchar, 'events': $events::varchar,
                          'engine_stats': $engine_stats::varchar, 'sid': $sid::integer}
