"""A loopback HTTP server for tests that talk to one (`record`, the bounded GET)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How often serve_forever looks for a shutdown request: socketserver's default of 0.5 s made
# every server's teardown wait half a second (23 of them in the fast loop).
POLL_S = 0.01


def serve_in_background(httpd: ThreadingHTTPServer) -> threading.Thread:
    """Run `httpd.serve_forever` in a daemon thread that `httpd.shutdown()` stops within
    POLL_S."""
    thread = threading.Thread(target=httpd.serve_forever, args=(POLL_S,), daemon=True)
    thread.start()
    return thread


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 at a free port in a background thread; yields the base
    URL and shuts the server down on exit."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serve_in_background(httpd)
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
