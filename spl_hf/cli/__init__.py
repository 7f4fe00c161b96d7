"""The `spl-hf` console script.

Each subcommand lives in its own module under ``spl_hf.cli`` exposing
``add_parser(subparsers, name, help_text, action)``, whose options are config dataclasses turned into
flags by :func:`spl_hf.configs.add_config_parser` (flags, ``--config`` YAML, validation in one place).
Only the module of the command being run is imported (``spl-hf --help`` imports none), a command with
actions (``release tenets``, ``eval refusal``) configures only the ``action`` named on the command line
(the others, and all of them when none is named, are listed by name and help), and the config
dataclasses live in modules that import no heavy library, so that any ``--help`` answers at once; a
command imports its heavy modules inside its run function.

A user-facing failure (bad input, bad argument, an output spl_hf refuses to write, a file that
cannot be read or written) exits 2 with one line naming the file; ``--debug`` shows the
traceback instead. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from spl_hf.errors import USER_ERRORS

# (subcommand, module, one-line help). Order is the order shown by --help.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("rules", "spl_hf.cli.rules", "inspect and check a rule base (coverage, overlaps, conflicts)"),
    ("build", "spl_hf.cli.build", "build a dataset folder: SPL pairs (spl) or per-tenet DPO (tenets)"),
    ("derive", "spl_hf.cli.derive", "alias of `build spl`: SPL preference pairs from recorded attributes"),
    ("audit", "spl_hf.cli.audit", "recompute every label of a built dataset from its recorded derivation"),
    (
        "explain",
        "spl_hf.cli.explain",
        "why one row of a release says what it says (scores, rules, assignment)",
    ),
    ("view", "spl_hf.cli.view", "browse a release in a web page: card, figures, rows, explanations"),
    ("tables", "spl_hf.cli.tables", "composition tables of a built SPL dataset"),
    ("sources", "spl_hf.cli.sources", "read source preference pools into unified pair rows"),
    ("assign", "spl_hf.cli.assign", "min-cost-flow assignment of judged pairs to tenets"),
    ("tenets", "spl_hf.cli.tenets", "list tenets (tenets build: alias of `build tenets`)"),
    ("model", "spl_hf.cli.model", "prepare the embedded model cache and show model info"),
    ("label", "spl_hf.cli.label", "assign SPL attributes with an LM labeler"),
    ("judge", "spl_hf.cli.judge", "score response pairs per tenet with an LM judge (both orderings)"),
    ("generate", "spl_hf.cli.generate", "generate candidate responses per prompt under named instructions"),
    ("eval", "spl_hf.cli.eval", "refusal evaluation of a model or a trained run; at-limit counts per seed"),
    ("report", "spl_hf.cli.report", "refusal statistics across seeds (figures) and the judge comparison"),
    ("agreement", "spl_hf.cli.agreement", "agreement of model attribute labels with a human rater panel"),
    ("hub", "spl_hf.cli.hub", "a local Hub server for offline tests of publishing pipelines"),
    ("publish", "spl_hf.cli.publish", "audit a built dataset folder and push it to the Hub in one commit"),
    ("card", "spl_hf.cli.card", "regenerate the dataset card of a build without rebuilding it"),
    ("release", "spl_hf.cli.release", "build a release end to end from its sources, in resumable stages"),
    ("train", "spl_hf.cli.train", "DPO + LoRA training: seed x condition sweeps of train.py"),
    ("demo", "spl_hf.cli.demo", "run the main job on the embedded defaults, writing under out/demo"),
)


def _given_files(args: argparse.Namespace | None) -> list[str]:
    from pathlib import Path

    values = vars(args).values() if args is not None else ()
    return [v for v in values if isinstance(v, str) and v and Path(v).is_file()]


def describe_error(exc: BaseException, args: argparse.Namespace | None = None) -> str:
    """One line for a user-facing error, naming the file when the exception knows it."""
    if isinstance(exc, UnicodeDecodeError):
        # The decoder does not know the file; name the files this command was given.
        files = ", ".join(_given_files(args)) or "an input file"
        return f"{files}: not valid UTF-8 text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        target = f"{exc.filename} -> {exc.filename2}" if exc.filename2 else str(exc.filename)
        return f"{target}: {exc.strerror}"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, EOFError):
        return f"a compressed file ended early ({text})"
    return text


def _words_in(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The command and its action named in ``argv``: the first two words that are not options.

    spl-hf's own options and a command's level take no values, so these are the command and action
    when given; an action word that is none of the command's actions is left to argparse to refuse.
    """
    words = [w for w in argv if not w.startswith("-")]
    return (words[0] if words else None), (words[1] if len(words) > 1 else None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The spl-hf parser; with ``argv``, only the command it names is imported and configured."""
    from spl_hf.configs import GlobalArgs, make_parser

    parser = make_parser(
        (GlobalArgs,),
        recipe=False,
        prog="spl-hf",
        description="Auditable preference supervision with recorded derivations.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted, action = _words_in(argv) if argv is not None else (None, None)
    # A command named on the command line is the only one that gets a parser (each costs about half a
    # millisecond); otherwise (spl-hf --help, an unknown word) every one is listed by name and help.
    only = argv is not None and any(name == wanted for name, _, _ in COMMANDS)
    for name, module_name, help_text in COMMANDS:
        if argv is not None and name != wanted:
            if not only:
                sub.add_parser(name, help=help_text)  # listed in --help; configured only when run
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # capability not installed in this checkout
        # The action word after a named command ("" when none): a command with actions configures only
        # that one, and lists the others (all of them for "" or an unknown word) by name and help.
        module.add_parser(sub, name, help_text, (action or "") if name == wanted else None)
    return parser


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises an interrupt like Ctrl-C does (atomic writes then clean up), in the main thread."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: object) -> None:
        from spl_hf.backends import Interrupted

        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    from spl_hf.configs import apply_config, parse_args

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parse_args(parser, argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with _sigterm_interrupts():
            if apply_config(args):  # the recipe becomes the defaults; flags still override it
                args = parse_args(parser, argv)
            code = int(args.func(args) or 0)
            sys.stdout.flush()  # here, not at exit: a reader that went away is handled below
            return code
    except BrokenPipeError:
        # The reader went away (`spl-hf tenets list | head`): stop quietly, as a process killed by
        # SIGPIPE does; stdout is pointed at /dev/null so that the exit's flush raises nothing more.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: one line, what is kept, exit 128 + signal
        if args.debug:
            raise
        from spl_hf.backends import as_interrupted

        stop = as_interrupted(exc)
        print(f"spl-hf {args.command}: {stop}", file=sys.stderr)
        return 128 + stop.signum
    except USER_ERRORS as exc:
        if args.debug:
            raise
        # User-facing errors carry the file/row/field; print them without a traceback.
        print(f"spl-hf {args.command}: error: {describe_error(exc, args)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
