-- Staging tables for one ingest call (temp tables; for inputs larger than half the memory
-- limit the driver uses ingest/stage_tables_on_disk.sql instead). Created inside the ingest
-- transaction, dropped before it commits. Every reader appends here (typed, one row per record,
-- with its source_id, 1-based line/row number `ln`, raw text where the reader has it, and
-- `perr`, the reason a field could not be converted). Checks and inserts read from them.
-- params:
create or replace temp table stage_proxy (
    source_id integer, ln bigint, raw varchar, perr varchar, origin varchar,
    call_id varchar, attempt double, t_planned double, t_sent double, t_end double,
    outcome varchar, execution_id varchar, attached boolean, t_cancel double, status double,
    model varchar, replica varchar, prompt_tokens double, max_tokens double
);
create or replace temp table stage_engine (
    source_id integer, ln bigint, raw varchar, perr varchar, origin varchar,
    type varchar, t double, execution_id varchar, event varchar, prompt_tokens double,
    replica varchar, step double, t_issue double, t_done double, prompt_computed double,
    prompt_cached double, decode_tokens double, num_running double, num_waiting double,
    num_batched_tokens double, kv_usage double, elapsed_ms double, num_preempted double,
    prefix_queries double, prefix_hits double, finish_reason varchar, output_tokens double,
    cached_tokens double, preemptions double, max_tokens double
);
-- Engine JSON Lines read by the typed reader (ingest/engine_read_jsonl_typed.sql): `type`
-- already filled in (rp_engine_type), every record already checked, the rows in file order (a
-- record's line is rowid - base + 1, base in stage_sources); inserted by the
-- ingest/direct_jsonl_*.sql queries. Narrow, as most records are steps: the
-- step fields (stats records use step, t_issue, prompt_computed and decode_tokens too) have
-- columns; the other fields of event and stats records are two lists, NULL on a step record
-- (writing and reading 15 NULL columns per step cost about 0.2 CPU s per 2M records):
-- `nums` = [t, prompt_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
-- elapsed_ms, num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
-- preemptions, max_tokens], `texts` = [event, finish_reason].
create or replace temp table stage_direct_engine (
    source_id integer, type varchar, execution_id varchar, replica varchar, step double,
    t_issue double, t_done double, prompt_computed double, prompt_cached double,
    decode_tokens double, nums double[], texts varchar[]
);
-- base: for sources staged by the fast JSON reader (ln NULL) or the typed reader
-- (stage_direct_engine), the rowid of their first row.
create or replace temp table stage_sources (source_id integer, path varchar, base bigint);
create or replace temp table stage_metrics (
    source_id integer, ln bigint, raw varchar, perr varchar,
    t double, name varchar, labels map(varchar, varchar), value double
);
