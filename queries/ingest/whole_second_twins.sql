-- Gateway sources that tell the same requests as another source of the same server, in
-- whole seconds (docs/formats.md, "Whole-second times"): one nginx often writes two access
-- logs of every request (the `combined` log with `$time_local`, a JSON log with `$msec`). A
-- source whose attempts all end on whole seconds is the twin of a finer one when their
-- counts agree within 1 % and at least 99 % of its attempts pair with one of the finer source
-- ending in the same second, with the same status and outcome. Only pairs with a source of
-- this ingest ($sources) and formats in $formats are looked at.
-- Columns: coarse, fine, attempts, matched.
-- params: formats, sources
with per as (
    select a.source_id, count(*) as n, bool_and(a.t_end = floor(a.t_end)) as whole
    from attempts a join sources s using (source_id)
    where s.format in (select unnest($formats::varchar[]))
    group by all
),
pairs as (
    select c.source_id as coarse, f.source_id as fine, c.n as cn
    from per c join per f on c.source_id <> f.source_id and c.whole and not f.whole
    where (list_contains($sources::integer[], c.source_id)
           or list_contains($sources::integer[], f.source_id))
      and c.n between f.n * 0.99 and f.n * 1.01
),
keyed as (
    select source_id, floor(t_end) as s, coalesce(status, -1) as st, outcome, count(*) as n
    from attempts
    where source_id in (select coarse from pairs union select fine from pairs)
    group by all
)
select p.coarse, p.fine, p.cn as attempts, sum(least(c.n, coalesce(f.n, 0))) as matched
from pairs p
join keyed c on c.source_id = p.coarse
left join keyed f on f.source_id = p.fine and f.s = c.s and f.st = c.st and f.outcome = c.outcome
group by all
having sum(least(c.n, coalesce(f.n, 0))) >= 0.99 * p.cn
order by p.coarse, p.fine
