-- Synthetic incident for bench/analyze.py, generated inside DuckDB (no Python rows):
-- $calls calls over $span seconds on 4 replicas; ~22 % of calls retry once, ~8 % twice
-- (retries 125 s after the previous attempt, like a 120 s client deadline plus backoff);
-- 4 % of retries are shed and 4 % attach; earlier attempts time out and are aborted.
-- Each execution: arrived, scheduled after a wait, first_token, then finished or aborted;
-- steps: two prefill chunks then one decode token per step (about $decode_mean steps) on
-- each replica's scheduler grid of 30 ms steps, so executions running together share a step
-- (as in a real trace: one row per (step, execution scheduled in it)). Metrics: vllm counters and the waiting gauge every 5 s per replica.
-- Choices are for shape, not for realism of any one number.
-- params: calls, span, decode_mean
select setseed(0.42);

create or replace temp table g_calls as
select c as call_id_n, c * ($span / $calls) + random() * ($span / $calls) as t_planned,
       case when random() < 0.08 then 3 when random() < 0.24 then 2 else 1 end as n_att,
       (11000 + random() * 2000)::bigint as prompt,
       c % 4 as rep
from range($calls) t(c);

create or replace temp table g_att as
select c.*, k as attempt, c.t_planned + k * 125.0 as t_sent,
       k = c.n_att - 1 as last,
       case when k > 0 and random() < 0.04 then 'shed'
            when k > 0 and random() < 0.04 then 'attach' else 'new' end as kind
from g_calls c, range(c.n_att) r(k);

-- Columns by name, so a column added to the schema later cannot shift these values.
insert into sources (source_id, path, kind, format, sha256, rows, rejected, ingested_at) values
  (1001, 'bench-proxy', 'proxy', 'parquet', 'bench-1', 0, 0, now()),
  (1002, 'bench-engine', 'engine', 'parquet', 'bench-2', 0, 0, now()),
  (1003, 'bench-metrics', 'metrics', 'openmetrics', 'bench-3', 0, 0, now());

insert into attempts
select 'c' || call_id_n, attempt, t_planned, t_sent,
       t_sent + case when last then 40 + random() * 60 when kind = 'shed' then 0 else 120 end,
       case when kind = 'shed' then 'shed' when last then 'delivered' else 'client_gone' end,
       case when kind = 'shed' then null
            when kind = 'attach' then 'x' || call_id_n || '-' || (attempt - 1)
            else 'x' || call_id_n || '-' || attempt end,
       kind = 'attach',
       case when not last and kind = 'new' then t_sent + 120 end,
       200, 'm', 'r' || rep, prompt, 2048, 1001, row_number() over ()
from g_att;

create or replace temp table g_exec as
select 'x' || call_id_n || '-' || attempt as xid, 'r' || rep as replica, prompt, t_sent + 0.01 as ta,
       t_sent + 0.01 + case when last then random() * 20 else random() * 150 end as ts, last,
       case when last then null else t_sent + 120.2 end as t_abort,
       (random() * 2 * $decode_mean)::bigint + 1 as n_decode
from g_att where kind = 'new';

insert into events (t, execution_id, event, prompt_tokens, replica, source_id, source_row)
select t, xid, ev, p, replica, 1002, row_number() over () from (
    select ta as t, xid, 'arrived' as ev, prompt as p, replica from g_exec
    union all select ts, xid, 'scheduled', null, replica from g_exec
    union all select ts + 0.06, xid, 'first_token', null, replica from g_exec
        where t_abort is null or t_abort > ts + 0.06
    union all select ts + 0.06 + n_decode * 0.03, xid, 'finished', null, replica from g_exec
        where t_abort is null or t_abort > ts + 0.06 + n_decode * 0.03
    union all select t_abort, xid, 'aborted', null, replica from g_exec
        where t_abort is not null and t_abort <= ts + 0.06 + n_decode * 0.03
);

insert into steps
select step, step * 0.03, step * 0.03 + 0.03, xid, pc, 0, dec, replica, 1002, row_number() over ()
from (
    select e.xid, e.replica, ceil(e.ts / 0.03)::bigint + k as step,
           case when k < 2 then e.prompt // 2 else 0 end as pc,
           case when k >= 1 then 1 else 0 end as dec
    from g_exec e, range(e.n_decode + 2) r(k)
    where e.t_abort is null or e.ts + k * 0.03 < e.t_abort
);

insert into metric_samples
select t, name, map(['pod', 'model_name'], [replica, 'm']), v, 1003, row_number() over ()
from (
    select g.t, n.name, r.replica,
           case when n.name = 'vllm:num_requests_waiting' then random() * 30
                else sum(random() * 50000) over (partition by n.name, r.replica order by g.t) end as v
    from (select i * 5.0 as t from range(cast($span / 5 + 200 as bigint)) x(i)) g,
         (values ('vllm:prompt_tokens_total'), ('vllm:prefix_cache_queries_total'),
                 ('vllm:num_requests_waiting')) n(name),
         (values ('r0'), ('r1'), ('r2'), ('r3')) r(replica)
);

insert into manifests values
  (1004, 'bench', 1.0, 120, 840, 'pulse', 0.0, 'synthetic bench workspace', '{}');
insert into phases values
  (1004, 'base', 0, $span / 3), (1004, 'pulse', $span / 3, $span / 3 + 600),
  (1004, 'hold', $span / 3 + 600, $span + 400);
