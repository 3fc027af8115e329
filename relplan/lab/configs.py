"""The configuration files the lab writes: nginx.conf and prometheus.yml."""

from __future__ import annotations

from relplan.lab.settings import STATUS_PATH, LabSettings

# The JSON access log most nginx operators configure (escape=json, nginx's own variable names as
# keys), plus the call key and retry count the drill's clients send as request headers. nginx
# writes a line when the request ENDS: $msec and $time_iso8601 are end times.
JSON_FORMAT = (
    '\'{"msec":"$msec","time_iso8601":"$time_iso8601","request_id":"$request_id",'
    '"http_x_request_id":"$http_x_request_id","http_x_relplan_call":"$http_x_relplan_call",'
    '"http_x_relplan_attempt":"$http_x_relplan_attempt","remote_addr":"$remote_addr",'
    '"request":"$request","status":"$status","request_time":"$request_time",'
    '"upstream_response_time":"$upstream_response_time",'
    '"upstream_connect_time":"$upstream_connect_time",'
    '"upstream_header_time":"$upstream_header_time","upstream_status":"$upstream_status",'
    '"upstream_addr":"$upstream_addr","bytes_sent":"$bytes_sent",'
    '"body_bytes_sent":"$body_bytes_sent","request_length":"$request_length"}\''
)


def nginx_conf(s: LabSettings) -> str:
    """nginx in front of vLLM: streaming passed through, both access logs, cancellation as set."""
    ignore_abort = "off" if s.cancel else "on"
    # proxy_ignore_client_abort only covers the wait for the upstream's answer: once nginx
    # writes to a client that left (a streamed token), the write fails and nginx closes the
    # upstream anyway (measured on the lab, buffered or not). So cancellation off holds for
    # non-streaming requests; a streaming client that leaves is cancelled at the next token.
    tmp = s.nginx_dir / "tmp"
    return f"""# Written by `relplan lab up`; edits are overwritten.
worker_processes 1;
pid {s.nginx_dir / "nginx.pid"};
error_log {s.logs / "nginx-error.log"} warn;
events {{ worker_connections 4096; }}
http {{
  log_format relplan_json escape=json {JSON_FORMAT};
  access_log {s.access_json} relplan_json;
  access_log {s.access_log} combined;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  upstream vllm {{ server 127.0.0.1:{s.vllm_port}; keepalive 64; }}
  server {{
    listen 127.0.0.1:{s.nginx_port};
    client_max_body_size 16m;
    # `relplan lab collect` waits on this page until no request is in flight.
    location = {STATUS_PATH} {{ stub_status; access_log off; allow 127.0.0.1; deny all; }}
    location / {{
      proxy_pass http://vllm;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Request-Id $http_x_request_id;
      proxy_buffering off;
      proxy_read_timeout 3600s;
      # off (nginx's default): a client that leaves closes the upstream connection and vLLM
      # aborts the request (cancellation on). on: vLLM finishes work nobody waits for.
      proxy_ignore_client_abort {ignore_abort};
    }}
  }}
}}
"""


def prometheus_yml(s: LabSettings) -> str:
    """Prometheus scraping vLLM every second."""
    return f"""# Written by `relplan lab up`; edits are overwritten.
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: vllm
    static_configs:
      - targets: ["127.0.0.1:{s.vllm_port}"]
"""
