"""`spl-hf publish`: audit a built dataset folder and push it to the Hub in one commit."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Audit the build folder (every row, the manifest, the tenet certificate) and refuse it "
        "unless clean; create the dataset repo if needed; upload every file in ONE commit that also deletes "
        "the repo's files the build no longer has. Endpoint and token come from HF_ENDPOINT and HF_TOKEN. "
        "Prints the commit sha and the load_dataset(...) line pinned to it.",
    )
    p.add_argument("path", help="dataset folder written by an spl-hf build")
    p.add_argument("--repo-id", required=True, help="ORG/NAME of the dataset repo")
    p.add_argument("--revision", default=None, help="branch to commit to (default main; created if missing)")
    p.add_argument(
        "--private",
        action="store_true",
        help="the repo must be private: created private, or an existing public repo made private through "
        "its settings (refused with exit 2 when that is not possible); a private repo is never made public",
    )
    p.add_argument(  # CLI-MERGE: publish sources (as `spl-hf audit --sources`)
        "--sources",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="check every row against its source records before publishing, as `spl-hf audit --sources` "
        "does (tenet builds POOL=FILE, POOL=ORG/NAME@REVISION or a unified pairs file; SPL builds "
        "prompts=FILE candidates=FILE); the release records the files checked by sha256 (provenance.json, card)",
    )
    p.add_argument(
        "--create-pr", action="store_true", help="open a pull request instead of committing to the branch"
    )
    p.add_argument("--message", default=None, help="commit message")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"repo_id","commit_sha","files","configs","changed","private","provenance"}',
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import httpx2  # huggingface_hub's HTTP client
    from huggingface_hub.errors import HfHubHTTPError

    from spl_hf.hub.publish import publish

    try:
        result = publish(
            args.path,
            args.repo_id,
            revision=args.revision,
            private=args.private,
            create_pr=args.create_pr,
            message=args.message,
            sources=args.sources,
        )
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "no response"
        hint = " (is HF_TOKEN set to a token with write access?)" if status in (401, 403) else ""
        raise ValueError(
            f"{args.repo_id}: {_endpoint()} refused the push ({status}): {str(exc).splitlines()[0]}{hint}"
        ) from None
    except (httpx2.TransportError, ConnectionError) as exc:
        raise ValueError(f"{args.repo_id}: cannot reach {_endpoint()} (HF_ENDPOINT): {exc}") from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    if result.visibility_changed:
        print(f"{result.repo_id} was public: made private, as --private asks")
    if not result.changed:
        pr = "; no pull request opened" if args.create_pr else ""
        print(
            f"nothing changed: {result.repo_id}@{result.revision} already holds these {len(result.files)} "
            f"files{pr}"
        )
    else:
        where = f"pull request {result.pr_url}" if result.pr_url else f"{result.repo_id}@{result.revision}"
        print(f"published {len(result.files)} files ({len(result.deleted)} stale removed) to {where}")
    prov = result.provenance
    if prov.get("checked"):
        print(f"provenance: {prov['rows_checked']} rows checked against {len(prov['sources'])} source(s)")
    else:
        print("provenance: not checked (no --sources); the card says so")
    print(f"commit {result.commit_sha}")
    print(result.load_line())
    return 0


def _endpoint() -> str:
    import os

    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
