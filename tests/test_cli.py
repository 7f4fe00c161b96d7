import subprocess
import sys

from spl_hf.cli import COMMANDS, build_parser


def test_every_subcommand_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, _, _ in COMMANDS:
        if name in sub.choices:
            assert sub.choices[name].format_help()


def test_help_is_fast_and_does_not_import_torch():
    code = "import sys; from spl_hf.cli import main; main(['--help']) if False else None; build = __import__('spl_hf.cli', fromlist=['build_parser']).build_parser(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "spl_hf.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "audit" in out.stdout
