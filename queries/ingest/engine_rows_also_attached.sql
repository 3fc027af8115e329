-- The first engine record stored in the workspace's tables that attachment $attached_id
-- also holds (the same records through two routes: copied by an ingest and attached in
-- place would count twice). $source_id: only the rows of that stored source (an ingest
-- copying engine records into a workspace with an attachment), or NULL for every stored row
-- (an attach into a workspace that already holds copied engine records). A record is the
-- same by what identifies it, whatever the encoding: a step by (execution_id, step, t_issue,
-- t_done), an event by (execution_id, event, t), a stats line by (step, t_issue); replicas
-- must agree where both name one (a partition key may supply it on one side only).
-- Needs workspace/attached_macros.sql (relplan.workspace.attached.define).
-- params: source_id, attached_id
select * from (
    select 'step' as what, s.source_id, s.source_row, a.source_file, a.source_row as file_row
    from steps as s
    join rp_attached_steps($attached_id) as a
      on s.execution_id = a.execution_id and s.step = a.step and s.t_issue = a.t_issue
     and s.t_done = a.t_done
     and (s.replica is null or a.replica is null or s.replica = a.replica)
    where ($source_id is null or s.source_id = $source_id)
    union all
    select 'event', e.source_id, e.source_row, a.source_file, a.source_row
    from events as e
    join rp_attached_events($attached_id) as a
      on e.execution_id = a.execution_id and e.event = a.event and e.t = a.t
     and (e.replica is null or a.replica is null or e.replica = a.replica)
    where ($source_id is null or e.source_id = $source_id)
    union all
    select 'stats line', x.source_id, x.source_row, a.source_file, a.source_row
    from engine_stats as x
    join rp_attached_stats($attached_id) as a
      on x.step = a.step and x.t_issue = a.t_issue
     and (x.replica is null or a.replica is null or x.replica = a.replica)
    where ($source_id is null or x.source_id = $source_id)
)
order by source_id, source_row
limit 1
