"""The CLI is a thin shell: each command only parses and calls the library (issue 16)."""

from __future__ import annotations

import ast
import inspect

import typer

from digest import cli

MAX_BODY_LINES = 30


def _body_lines(function) -> int:
    """Lines of a command's body: its signature and docstring left out."""
    tree = ast.parse(inspect.getsource(function))
    body = tree.body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1


def test_every_command_body_is_at_most_thirty_lines():
    commands = typer.main.get_command(cli.app).commands
    lengths = {name: _body_lines(command.callback) for name, command in commands.items()}
    assert len(lengths) >= 8  # newsletter, summarize, dedup, ingest, email, status, history, …
    assert {name: n for name, n in lengths.items() if n > MAX_BODY_LINES} == {}
