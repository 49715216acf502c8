"""The `winsuite` command imports the module of the subcommand asked for alone: its map of subcommands to modules
says what each module adds, and a command parses the same with its module alone as with all of them."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import pytest

from winsuite.cli import COMMANDS
from winsuite.cli import build_parser


def registered(module: str) -> list[str]:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(f"winsuite.commands.{module}").register(subparsers)
    return list(subparsers.choices)


@pytest.mark.parametrize("module", sorted(set(COMMANDS.values())))
def test_each_module_adds_the_commands_the_map_names_for_it(module: str) -> None:
    assert registered(module) == [command for command, owner in COMMANDS.items() if owner == module]


def test_every_module_of_the_commands_package_is_in_the_map() -> None:
    package = importlib.import_module("winsuite.commands")
    modules = {path.stem for path in Path(package.__file__ or "").parent.glob("*.py")} - {"__init__"}
    adding = {name for name in modules if hasattr(importlib.import_module(f"winsuite.commands.{name}"), "register")}
    assert adding == set(COMMANDS.values())


@pytest.mark.parametrize("argv", [["report", "--results", "r", "--format", "json"], ["cluster", "status"],
                                  ["attach", "builds/1"], ["list", "--focus", "DNS"]])
def test_a_command_parses_alike_with_its_module_alone(argv: list[str]) -> None:
    alone, every = build_parser(argv[0]).parse_args(argv), build_parser().parse_args(argv)
    assert {k: v for k, v in vars(alone).items() if k != "handler"} == {
        k: v for k, v in vars(every).items() if k != "handler"}
    assert alone.handler == every.handler


def test_a_name_that_is_no_command_lists_them_all(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser("bogus").parse_args(["bogus"])
    assert "'shard-worker'" in capsys.readouterr().err
