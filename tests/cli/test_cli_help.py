"""Every option of every command, as `--help` shows it: it has help text, and its metavar says what to give
(FILE, TEXT...), never a Python type such as `<list[Path]>` (issue 49)."""

from __future__ import annotations

from collections.abc import Iterator

import click
import typer

from groundwire.cli.main import app


def _options(command: click.Command, path: str, context: click.Context) -> Iterator[tuple[str, str, str | None]]:
    """(command path, the option's column in --help, its help) for every option --help lists, subcommands too."""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _options(sub, f"{path} {name}", click.Context(sub, parent=context, info_name=name))
    for parameter in command.params:
        record = parameter.get_help_record(context)
        if record is not None:  # arguments and hidden options have none
            yield path, record[0], getattr(parameter, "help", None)


def test_every_option_of_every_command_has_help_and_a_readable_metavar() -> None:
    root = typer.main.get_command(app)
    options = list(_options(root, "groundwire", click.Context(root, info_name="groundwire")))
    commands = {path for path, _, _ in options}
    assert {"groundwire check", "groundwire serve", "groundwire train run", "groundwire batch"} <= commands
    assert [(path, column) for path, column, help_text in options if not (help_text or "").strip()] == []
    assert [(path, column) for path, column, _ in options if "[" in column] == []  # e.g. <list[Path]>


def test_the_check_help_names_the_context_file_and_the_question() -> None:
    root = typer.main.get_command(app)
    check = {column: help_text for _, column, help_text in _options(root, "groundwire", click.Context(root))
             if column.startswith(("-c,", "-q,"))}
    assert check["-c, --context FILE"] and check["-q, --question <str>"]
